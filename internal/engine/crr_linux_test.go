package engine

import (
	"net"
	"testing"
	"time"
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
	sh, _ := NewCRRShared(ln, ln.Addr().(*net.TCPAddr).AddrPort().Addr())
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
