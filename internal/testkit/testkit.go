// Package testkit holds the helpers wirespeed's tests share, as
// tailscale's tstest and ndt-server's ndt7test do: loopback listeners and
// connection pairs that are closed when the test ends (Listen, FreeAddr,
// TCPPair), runs of free ports (FreePorts), a server run for the length
// of a test (Serve), goroutine leak checks (VerifyNoLeaks,
// CheckNoLeaks), golden files with one -update flag (Golden), waits
// bounded in time instead of fixed sleeps (WaitFor), and counting the
// heap allocations of loops running in goroutines (CountAllocs).
//
// It is test-only: only _test.go files import it (a test in
// cmd/wirespeed checks that). Its files are not _test.go files so that
// every package's tests can import it, and it imports no wirespeed
// package, so that the internal tests of any package, down to engine and
// measure, can use it without an import cycle. The helpers that start a
// wirespeed server and dial it are servertest's.
package testkit

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// Listen listens on a free TCP port of 127.0.0.1 and closes the listener
// when the test ends. It fails t if it cannot listen.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// FreeAddr returns an address of 127.0.0.1 on which nothing listened a
// moment ago: a port to start a server on, or to find no server at.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// FreePorts returns the first of n consecutive ports of 127.0.0.1 on
// which TCP and UDP could both listen a moment ago: a client's fixed
// source ports (--cport), or a server's port for both protocols. The
// search starts at a port in 20000..32767 that changes from call to call,
// below Linux's default ephemeral range (32768..60999) where the kernel
// picks the ports of other tests' connections, and goes up from there. It
// fails t if no such run is left.
func FreePorts(t testing.TB, n int) int {
	t.Helper()
	return freePortsFrom(t, 20000+(time.Now().Nanosecond()/1000)%(12768-n), n)
}

// freePortsFrom is FreePorts searching up from port from.
func freePortsFrom(t testing.TB, from, n int) int {
	t.Helper()
	if n < 1 || n > 1000 {
		t.Fatalf("FreePorts(%d): want 1 to 1000 ports", n)
	}
	for base := from; base+n-1 <= 65535; base++ {
		if p, ok := portsFree(base, n); !ok {
			base = p // the run cannot hold port p: go past it
			continue
		}
		return base
	}
	t.Fatalf("no %d consecutive ports of 127.0.0.1 free for TCP and UDP from %d up", n, from)
	return 0
}

// portsFree reports whether TCP and UDP can both listen on each of the n
// ports of 127.0.0.1 from base, and if not, the first port that failed.
func portsFree(base, n int) (int, bool) {
	var closers []func() error
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for p := base; p < base+n; p++ {
		a := fmt.Sprintf("127.0.0.1:%d", p)
		ln, err := net.Listen("tcp", a)
		if err != nil {
			return p, false
		}
		closers = append(closers, ln.Close)
		pc, err := net.ListenPacket("udp", a)
		if err != nil {
			return p, false
		}
		closers = append(closers, pc.Close)
	}
	return 0, true
}

// TCPPair returns the two ends of a TCP connection on 127.0.0.1, the
// dialing end first; both are closed when the test ends.
func TCPPair(t testing.TB) (dialed, accepted *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	defer ln.Close()
	a, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second))
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return a.(*net.TCPConn), b.(*net.TCPConn)
}

// StopTimeout bounds how long Serve's stop waits for serve to return.
const StopTimeout = 20 * time.Second

// Serve runs serve on a listener on a free port of 127.0.0.1 until stop
// is called or the test ends, and returns the listener's address. Stop
// cancels serve's context and waits for it to return (at most
// StopTimeout); an error from serve, or serve not returning, fails t. Stop
// may be called more than once.
func Serve(t testing.TB, serve func(ctx context.Context, ln net.Listener) error) (addr string, stop func()) {
	t.Helper()
	ln := Listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(StopTimeout):
				t.Errorf("serve did not return within %v of its context's end", StopTimeout)
			}
		})
	}
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// WaitFor calls cond every 10ms until it returns true, for at most
// within, and reports whether it did.
func WaitFor(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
