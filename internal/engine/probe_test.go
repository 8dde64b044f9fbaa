package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// TestUDPEchoerBoundsRate: a hostile client sends 2000 valid probes as
// fast as it can; the echoer answers no more than its rate allows over
// the time (plus its burst), counted by the client's socket, and drops
// what is not a probe.
func TestUDPEchoerBoundsRate(t *testing.T) {
	srv, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl, err := net.DialUDP("udp4", nil, srv.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cl.SetReadBuffer(4 << 20)
	// The server's socket answers the client's address alone, as the
	// server's connected probe socket does.
	if err := ConnectUDP(srv, cl.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
		t.Fatal(err)
	}
	const rate = 50.0
	e := NewUDPEchoer(srv, rate)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() { e.Run(ctx); close(done) }()
	buf := make([]byte, probeSize)
	copy(buf, probeMagic[:])
	for i := range 2000 {
		binary.BigEndian.PutUint32(buf[4:], uint32(i))
		cl.Write(buf)
		if i%100 == 0 {
			cl.Write([]byte("not a probe"))
		}
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	<-done
	elapsed := time.Since(start).Seconds()
	got := 0
	cl.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		if _, err := cl.Read(buf); err != nil {
			break
		}
		got++
	}
	bound := rate*elapsed + max(echoBurst, rate/2)
	if float64(got) > bound || got == 0 {
		t.Errorf("client got %d echoes in %.2f s; the echoer's rate of %g/s allows %.0f", got, elapsed, rate, bound)
	}
	// The socket's buffer may drop some of the flood before the echoer
	// reads it; what it read and did not echo it dropped.
	if int64(got) != e.Echoed() || e.Dropped() < 20 || e.Echoed()+e.Dropped() > 2020 {
		t.Errorf("echoed %d (client counted %d), dropped %d", e.Echoed(), got, e.Dropped())
	}
}

// TestTCPProbeServerBounds: a hostile client of an RRUL test opens more
// TCP probe connections than a prober ever has out (tcpProbesInFlight)
// and sends nothing on them. The server holds tcpProbesInFlight of them
// and closes every further one unanswered at once (the client reads its
// end of stream), counting it; a connection from another address than
// the test's peer is closed at once even with room for it; and a held
// connection is still answered
// when its byte comes.
func TestTCPProbeServerBounds(t *testing.T) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewTCPProbeServer(ln, netip.MustParseAddr("127.0.0.1"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		ln.Close()
	}()
	addr := ln.Addr().String()
	closedAtOnce := func(c net.Conn) bool {
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		var b [1]byte
		n, err := c.Read(b[:])
		return n == 0 && err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	// With room for it, a connection from another address than the
	// peer's is closed unanswered all the same.
	other, err := net.DialTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	if !closedAtOnce(other) {
		t.Error("a connection from 127.0.0.2, not the test's peer, was not closed at once")
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range tcpProbesInFlight {
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// The server accepts connections in the order they came (the
	// listen backlog is a queue), so every further one finds the held
	// ones out, silent for up to tcpProbeTimeout.
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s within 5 s", what)
			}
		}
	}
	const extra = 8
	for i := range extra {
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			t.Fatal(err)
		}
		if !closedAtOnce(c) {
			t.Errorf("connection %d over the %d held was not closed at once", i+1, tcpProbesInFlight)
		}
	}
	if got := srv.Refused(); got != extra+1 {
		t.Errorf("%d connections refused, want %d", got, extra+1)
	}
	c := held[0]
	c.SetDeadline(time.Now().Add(2 * time.Second))
	var b [1]byte
	if _, err := c.Write([]byte{7}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, b[:]); err != nil || b[0] != 7 {
		t.Errorf("a held probe's answer: %v %v", b, err)
	}
	waitFor("the answered probe to be counted", func() bool { return srv.Answered() == 1 })
}

// TestTCPProberBounded: against a server that accepts every probe
// connection and never answers, the prober has at most
// tcpProbesInFlight connections open at once, skips (and counts) the
// probes due meanwhile, and returns once each open probe has had its
// tcpProbeTimeout.
func TestTCPProberBounded(t *testing.T) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var open, most atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := open.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			go func() {
				defer open.Add(-1)
				defer c.Close()
				io.Copy(io.Discard, c) // never answers; ends when the prober closes
			}()
		}
	}()
	p := NewTCPProber("tcp4", ln.Addr().String(), Options{}, 10*time.Millisecond, time.Now(), 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	n := int64(len(p.Samples()))
	t.Logf("%d probes sent, %d skipped, at most %d open at once; Run took %v", n, p.Skipped.Load(), most.Load(), took)
	if most.Load() > tcpProbesInFlight || n != tcpProbesInFlight {
		t.Errorf("%d probes sent and at most %d connections open at once, want %d", n, most.Load(), tcpProbesInFlight)
	}
	if p.Skipped.Load() < 20 {
		t.Errorf("%d probes skipped in 0.5 s at 10 ms with all %d out", p.Skipped.Load(), tcpProbesInFlight)
	}
	for _, s := range p.Samples() {
		if s.RTTNanos >= 0 {
			t.Errorf("a probe the server never answered has a round trip: %+v", s)
		}
	}
	if took < tcpProbeTimeout || took > tcpProbeTimeout+2*time.Second {
		t.Errorf("Run took %v, want the %v of the probes out and little more", took, tcpProbeTimeout)
	}
}

// Echoed and Dropped count the probes answered and those refused (over the
// rate, or not probes).
func (e *UDPEchoer) Echoed() int64  { return e.echoed.Load() }
func (e *UDPEchoer) Dropped() int64 { return e.dropped.Load() }

// Answered and Refused count the probes answered and the connections
// closed unanswered.
func (s *TCPProbeServer) Answered() int64 { return s.answered.Load() }
func (s *TCPProbeServer) Refused() int64  { return s.refused.Load() }
