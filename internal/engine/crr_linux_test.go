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
