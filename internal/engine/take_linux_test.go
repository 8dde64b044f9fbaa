//go:build !wirespeed_portable

package engine

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// closeProbe is a connection that, once closed, runs after: what a
// sampler on another thread would see at that moment.
type closeProbe struct {
	net.Conn
	after func()
}

func (c *closeProbe) Close() error {
	err := c.Conn.Close()
	c.after()
	return err
}

// TestTakeKeepsTCPInfo: while a loop takes its socket out of Go's poller,
// TCP_INFO read through the socket's raw() (the interval sampler's path)
// finds an open socket at every moment, the instant the connection is
// closed too. Before, take closed the connection before publishing the
// duplicate, and a sampler there got "use of closed network connection":
// on a busy host the first interval of a run came out without its
// retransmits and congestion window (TestFormatUnits, two yes).
func TestTakeKeepsTCPInfo(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var s streamSocket
	tcpInfo := func() error {
		var gerr error
		if err := s.raw().Control(func(fd uintptr) {
			_, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		}); err != nil {
			return err
		}
		return gerr
	}
	var atClose error
	closed := false
	s.init(&closeProbe{Conn: c, after: func() {
		closed = true
		if err := tcpInfo(); err != nil && atClose == nil {
			atClose = err
		}
	}}, rc)
	if _, err := s.take(); err != nil {
		t.Fatal(err)
	}
	defer s.own.Close()
	if !closed {
		t.Fatal("take did not close the connection it detached")
	}
	if atClose != nil {
		t.Errorf("TCP_INFO as the connection closed: %v", atClose)
	}
	if err := tcpInfo(); err != nil {
		t.Errorf("TCP_INFO after take: %v", err)
	}
}
