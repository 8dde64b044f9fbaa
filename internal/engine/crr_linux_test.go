//go:build !wirespeed_portable

package engine

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCRRServerStop: a TCP_CRR server loop that no connection comes to
// still sees Stop within a few poll intervals.
func TestCRRServerStop(t *testing.T) {
	ln, err := ListenCRR("tcp4", "127.0.0.1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sh, err := NewCRRShared(ln, ln.Addr().(*net.TCPAddr).AddrPort().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	srv := NewCRRServer(sh, 1, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Run() }()
	time.Sleep(2 * pollInterval)
	srv.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stopped server loop returned %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("server loop blocked in accept did not see Stop")
	}
}

// TestCRRServerWaitsForRequest: a request that comes later than the poll
// interval after the connect is still answered, as on a loaded machine;
// the server used to close the connection unanswered, and the client got
// a reset.
func TestCRRServerWaitsForRequest(t *testing.T) {
	ln, err := ListenCRR("tcp4", "127.0.0.1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sh, err := NewCRRShared(ln, ln.Addr().(*net.TCPAddr).AddrPort().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	srv := NewCRRServer(sh, 1, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Run() }()
	defer func() { srv.Stop(); <-done }()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(3 * pollInterval)
	if _, err := c.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil {
		t.Fatalf("late request: %v", err)
	}
}

// TestCRRAcceptedInheritTimeouts: the server loop sets no timeout on the
// sockets it accepts, counting on the kernel to copy the listener's: ask
// the kernel what an accepted socket has.
func TestCRRAcceptedInheritTimeouts(t *testing.T) {
	ln, err := ListenCRR("tcp4", "127.0.0.1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sh, err := NewCRRShared(ln, ln.Addr().(*net.TCPAddr).AddrPort().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nfd, _, err := unix.Accept4(sh.lfd, unix.SOCK_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(nfd)
	for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
		// The kernel keeps the timeout in jiffies: 50 ms may read back
		// as 52.
		want, err := unix.GetsockoptTimeval(sh.lfd, unix.SOL_SOCKET, opt)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Duration(want.Nano()); d < pollInterval || d > 2*pollInterval {
			t.Errorf("listener's option %d: %v, want about %v", opt, d, pollInterval)
		}
		tv, err := unix.GetsockoptTimeval(nfd, unix.SOL_SOCKET, opt)
		if err != nil {
			t.Fatal(err)
		}
		if *tv != *want {
			t.Errorf("accepted socket's option %d: %v, want the listener's %v", opt, *tv, *want)
		}
	}
}
