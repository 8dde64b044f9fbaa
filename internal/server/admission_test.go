package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/report"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// TestTestLimits: a test over a limit is refused with a message naming the
// limit and its flag; the session goes on and a test within the limits
// runs.
func TestTestLimits(t *testing.T) {
	srv := startServer(t, server.Config{Admission: server.Admission{MaxDuration: time.Second, MaxParallel: 2, MaxUDPRateBitsPerSecond: 100e6}})
	c := mustDial(t, client.Config{Addr: srv.addr})
	long := shortSpec(spec.TCPStream, 1)
	long.Duration = 900 * time.Millisecond
	long.Omit = 200 * time.Millisecond
	wide := shortSpec(spec.TCPMaerts, 3)
	udp := func(rate float64, parallel int) spec.Test {
		sp := shortSpec(spec.UDPStream, parallel)
		sp.SendSize, sp.Reverse, sp.RateBitsPerSecond = spec.DefaultUDPSize, true, rate
		return sp
	}
	tests := []struct {
		name string
		sp   spec.Test
		want string
	}{
		{name: "duration with warm-up", sp: long, want: "--max-duration"},
		{name: "parallel", sp: wide, want: "--max-parallel"},
		{name: "UDP rate over the limit", sp: udp(150e6, 1), want: "--max-udp-rate"},
		{name: "UDP rate times streams", sp: udp(60e6, 2), want: "--max-udp-rate"},
		{name: "UDP as fast as possible", sp: udp(0, 1), want: "ask for a rate with -b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Run(context.Background(), tt.sp)
			if !errors.Is(err, control.ErrLimit) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want ErrLimit naming %s", err, tt.want)
			}
		})
	}
	if _, err := c.Run(context.Background(), shortSpec(spec.TCPBidir, 2)); err != nil {
		t.Errorf("test within the limits after refusals: %v", err)
	}
	// The limit is on what the server sends: a client may send faster.
	fromClient := udp(200e6, 1)
	fromClient.Reverse = false
	if _, err := c.Run(context.Background(), fromClient); err != nil {
		t.Errorf("UDP from the client above the server's sending limit: %v", err)
	}
	if _, err := c.Run(context.Background(), udp(50e6, 2)); err != nil {
		t.Errorf("UDP from the server within the limit: %v", err)
	}
	srv.logs.waitLog(t, "test refused", "reason=max_duration")
	srv.logs.waitLog(t, "test refused", "reason=max_parallel")
	srv.logs.waitLog(t, "test refused", "reason=max_udp_rate")
}

// TestMaxConnsPerAddr: one address holds at most the limit of control
// connections; other addresses are not affected, and a closed connection
// frees its place.
func TestMaxConnsPerAddr(t *testing.T) {
	srv := startServer(t, server.Config{Admission: server.Admission{MaxConnsPerAddr: 2}})
	a := mustDial(t, client.Config{Addr: srv.addr})
	mustDial(t, client.Config{Addr: srv.addr})
	_, err := dial(t, client.Config{Addr: srv.addr})
	if !errors.Is(err, control.ErrLimit) || !strings.Contains(err.Error(), "--max-conns-per-addr") {
		t.Fatalf("third connection: got %v, want ErrLimit naming --max-conns-per-addr", err)
	}
	srv.logs.waitLog(t, "control connection refused", "reason=max_conns_per_addr", "peer=127.0.0.1:")

	other := rawConn(t, srv.addr, "127.0.0.2", control.NewHello("raw", ""))
	if _, err := helloBack(t, other); err != nil {
		t.Errorf("another address: %v", err)
	}

	a.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := dial(t, client.Config{Addr: srv.addr})
		if err == nil {
			if _, err := c.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
				t.Error(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing one connection: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHandshakeDeadline: a connection that says nothing, or too little, is
// dropped at the handshake deadline (slowloris).
func TestHandshakeDeadline(t *testing.T) {
	srv := startServer(t, server.Config{HandshakeTimeout: 300 * time.Millisecond})
	tests := []struct {
		name string
		send []byte
	}{
		{name: "silent"},
		{name: "half a preamble", send: []byte("WS")},
		{name: "preamble only", send: []byte("WSPD")},
		{name: "half a hello", send: append([]byte("WSPD\x00\x00\x00\x40"), `{"type":"hel`...)},
		{name: "half a data header", send: []byte("WSDT0123")},
		{name: "half a TLS record", send: []byte{0x16, 0x03, 0x01}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", srv.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write(tt.send)
			start := time.Now()
			closed, _ := closedByServer(c, 5*time.Second)
			if !closed {
				t.Fatalf("connection still open after %v", time.Since(start))
			}
		})
	}
}

// TestHandshakeDeadlineIsWhole: the handshake timeout is one deadline
// for the preamble, the hello and the proof together. A client that
// dribbles a valid preamble and hello, a byte every 1.2 s, is closed at
// the 5 s deadline, not 5 s after its preamble (about 8.6 s when each step
// had a timeout of its own).
func TestHandshakeDeadlineIsWhole(t *testing.T) {
	t.Parallel()
	srv := startServer(t, server.Config{HandshakeTimeout: 5 * time.Second, Auth: server.Auth{PSK: testKey}})
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		dribble(c, authOffer(), 1200*time.Millisecond)
	}()
	closed, _ := closedByServer(c, 15*time.Second)
	took := time.Since(start)
	c.Close()
	<-done
	if !closed || took > 6500*time.Millisecond {
		t.Errorf("a dribbling handshake was closed after %v (closed: %v); want about 5s, the one handshake deadline", took.Round(time.Millisecond), closed)
	}
	t.Logf("dribbling connection closed after %v", took.Round(time.Millisecond))
}

// TestHandshakeFrameBound: before the client authenticated, a frame over
// control.HandshakeMaxFrame ends the connection at once, without waiting
// for (or allocating) its body, even though it is within MaxFrame.
func TestHandshakeFrameBound(t *testing.T) {
	srv := startServer(t, server.Config{HandshakeTimeout: 10 * time.Second})
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var hdr [8]byte
	copy(hdr[:], "WSPD")
	binary.BigEndian.PutUint32(hdr[4:], control.HandshakeMaxFrame+1)
	c.Write(hdr[:])
	start := time.Now()
	closed, _ := closedByServer(c, 5*time.Second)
	if !closed {
		t.Fatalf("a %d-byte hello kept the connection open for %v", control.HandshakeMaxFrame+1, time.Since(start))
	}
	srv.logs.waitLog(t, "handshake failed", "frame too large")
}

// TestMaxFrame: a control message over the server's frame bound is
// refused with a message naming --max-frame.
func TestMaxFrame(t *testing.T) {
	srv := startServer(t, server.Config{MaxFrame: 64 << 10})
	file := filepath.Join(t.TempDir(), "payload")
	os.WriteFile(file, make([]byte, 200<<10), 0o644)
	c := mustDial(t, client.Config{Addr: srv.addr})
	sp := shortSpec(spec.TCPMaerts, 1)
	sp.Payload = spec.Payload{Kind: spec.PayloadFile, Path: file}
	_, err := c.Run(context.Background(), sp)
	if !errors.Is(err, control.ErrLimit) || !strings.Contains(err.Error(), "--max-frame") {
		t.Errorf("got %v, want ErrLimit naming --max-frame", err)
	}
}

// TestTestOutlivesIdleTimeout: the control connection is quiet while a
// test runs; the idle timeout between tests must not cut a test that is
// longer than it.
func TestTestOutlivesIdleTimeout(t *testing.T) {
	srv := startServer(t, server.Config{IdleTimeout: 500 * time.Millisecond})
	c := mustDial(t, client.Config{Addr: srv.addr})
	sp := shortSpec(spec.TCPStream, 1)
	sp.Duration = 1500 * time.Millisecond
	res, err := c.Run(context.Background(), sp)
	if err != nil || res.Interrupted {
		t.Fatalf("test longer than the idle timeout: %v, interrupted %v", err, res.Interrupted)
	}
	// Between tests the idle timeout still ends a quiet session.
	time.Sleep(2 * time.Second)
	if _, err := c.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err == nil {
		t.Error("a session quiet for longer than the idle timeout was kept")
	}
}

// TestUnauthenticatedDoNotCountPerAddr: ten connections from one address
// that say hello and never prove the key do not take the places of
// authenticated sessions from that address (behind one NAT); the limit
// still holds for sessions that proved the key.
func TestUnauthenticatedDoNotCountPerAddr(t *testing.T) {
	srv := startServer(t, server.Config{HandshakeTimeout: 10 * time.Second, Auth: server.Auth{PSK: testKey},
		Admission: server.Admission{MaxConnsPerAddr: 2}})
	for range 10 {
		h := control.NewHello("no-proof", "")
		h.Auth = &control.AuthHello{Scheme: control.AuthScheme, Nonce: control.NewNonce()}
		if _, err := helloBack(t, rawConn(t, srv.addr, "", h)); err != nil {
			t.Fatalf("hello without proof: %v", err)
		}
	}
	keyed := client.Config{Addr: srv.addr, Security: client.Security{PSK: testKey}}
	a := mustDial(t, keyed)
	if _, err := a.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
		t.Fatalf("authenticated client beside 10 unauthenticated connections: %v", err)
	}
	mustDial(t, keyed)
	_, err := dial(t, keyed)
	if !errors.Is(err, control.ErrLimit) || !strings.Contains(err.Error(), "--max-conns-per-addr") {
		t.Fatalf("third authenticated session: got %v, want ErrLimit naming --max-conns-per-addr", err)
	}
}

// TestHandshakeRate: one address that starts control connections faster
// than --max-handshake-rate is refused, with a message naming the flag,
// once its burst (twice the rate) is spent; another address is not.
func TestHandshakeRate(t *testing.T) {
	srv := startServer(t, server.Config{Auth: server.Auth{PSK: testKey}, Admission: server.Admission{MaxHandshakeRate: 2}})
	h := control.NewHello("loop", "")
	h.Auth = &control.AuthHello{Scheme: control.AuthScheme, Nonce: control.NewNonce()}
	refusedAt := 0
	for i := 1; i <= 20 && refusedAt == 0; i++ {
		cc := rawConn(t, srv.addr, "127.0.0.2", h)
		_, err := helloBack(t, cc)
		switch {
		case errors.Is(err, control.ErrLimit):
			if !strings.Contains(err.Error(), "127.0.0.2") || !strings.Contains(err.Error(), "--max-handshake-rate") {
				t.Errorf("refusal %q does not name the address and --max-handshake-rate", err)
			}
			refusedAt = i
		case err != nil:
			t.Fatalf("connection %d: %v", i, err)
		}
		cc.NetConn().Close()
	}
	// A burst of 4, plus what came back while the loop ran.
	if refusedAt < 5 || refusedAt > 6 {
		t.Errorf("refused at connection %d of a fast loop; want 5 (a burst of twice the rate of 2/s), or one later", refusedAt)
	}
	c := mustDial(t, client.Config{Addr: srv.addr, Security: client.Security{PSK: testKey}})
	if _, err := c.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
		t.Errorf("another address during the loop: %v", err)
	}
	srv.logs.waitLog(t, "control connection refused", "reason=max_handshake_rate", "peer=127.0.0.2:")
}

// TestUDPRRPacedToMaxUDPRate: a UDP_RR test with small requests, large
// responses, a deep burst and two streams would make the server send at
// gigabits a second on loopback; the server paces its responses to
// --max-udp-rate instead. With a limit of 40 Mbit/s and 8000-byte
// responses, the client can complete at most 40e6 / (8000 * 8) = 625
// transactions a second (plus the pacer's 1 ms of credit per stream);
// the result says the server paced.
func TestUDPRRPacedToMaxUDPRate(t *testing.T) {
	testkit.Serial(t)
	const limit = 40e6
	srv := startServer(t, server.Config{Admission: server.Admission{MaxUDPRateBitsPerSecond: limit}})
	c := mustDial(t, client.Config{Addr: srv.addr})
	sp := shortSpec(spec.UDPRR, 2)
	sp.Duration = 1500 * time.Millisecond
	sp.RequestSize, sp.ResponseSize, sp.Burst = 1, 8000, 16
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	rr := res.Summary.RRSummary
	if rr == nil {
		t.Fatalf("no request/response summary: %+v", res.Summary)
	}
	sentBPS := rr.TransactionsPerSecond * float64(sp.ResponseSize) * 8
	t.Logf("UDP_RR 1/8000 burst 16 x 2 against a %g bit/s limit: %.0f transactions/s, %.3g bit/s of responses", limit, rr.TransactionsPerSecond, sentBPS)
	if sentBPS > 1.1*limit {
		t.Errorf("the server sent %.3g bit/s of responses (%.0f transactions/s of 8000 bytes), over its limit of %g", sentBPS, rr.TransactionsPerSecond, limit)
	}
	if sentBPS < 0.5*limit {
		t.Errorf("the server sent %.3g bit/s of responses, far below its limit of %g: pacing too strict", sentBPS, limit)
	}
	if !strings.Contains(strings.Join(report.WarningTexts(res.Warnings), "\n"), "paced its UDP responses") {
		t.Errorf("no warning that the server paced: %q", report.WarningTexts(res.Warnings))
	}
}
