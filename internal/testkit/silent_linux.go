package testkit

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// SilentListener returns the address of a 127.0.0.1 socket listening with
// a backlog of 0 that never accepts, with its accept queue filled: the
// kernel drops the SYNs of any further connect, which then hangs as it
// does toward a host that drops the port.
func SilentListener(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	// Fill the queue until a connect hangs.
	for i := 0; ; i++ {
		if i == 16 {
			t.Fatalf("the accept queue of %s never filled", addr)
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	return addr
}
