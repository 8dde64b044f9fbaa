package engine

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"wirespeed/internal/spec"
)

func TestPayload(t *testing.T) {
	p, err := NewPayload(spec.PayloadRandom, nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p.ring != randomRing || len(p.buf) != randomRing+1000 {
		t.Fatalf("ring %d, buf %d", p.ring, len(p.buf))
	}
	// Any offset in the ring starts a contiguous copy of the ring.
	if !bytes.Equal(p.buf[p.ring:], p.buf[:1000]) {
		t.Error("tail is not a copy of the head")
	}
	if bytes.Count(p.buf[:4096], []byte{0}) > 100 {
		t.Error("random payload looks like zeros")
	}

	f, err := NewPayload(spec.PayloadFile, []byte("abc"), 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(f.buf); got != "abcabcabcab" {
		t.Errorf("file payload %q", got)
	}
	z, _ := NewPayload(spec.PayloadZeros, nil, 16)
	if !bytes.Equal(z.buf, make([]byte, 32)) {
		t.Errorf("zeros payload %v", z.buf)
	}
	for _, bad := range []func() error{
		func() error { _, err := NewPayload(spec.PayloadFile, nil, 8); return err },
		func() error { _, err := NewPayload("ones", nil, 8); return err },
		func() error { _, err := NewPayload(spec.PayloadZeros, nil, 0); return err },
	} {
		if bad() == nil {
			t.Error("bad payload accepted")
		}
	}
}

// pair returns two ends of a loopback TCP connection.
func pair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan *net.TCPConn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ch <- nil
			return
		}
		ch <- c.(*net.TCPConn)
	}()
	a, err := Dial(context.Background(), "tcp", ln.Addr().String(), Options{SockBuf: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	b := <-ch
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestSendReceiveTotals(t *testing.T) {
	a, b := pair(t)
	snd, _ := NewStream(a)
	rcv, _ := NewStream(b)
	p, _ := NewPayload(spec.PayloadRandom, nil, 1000)

	rerr := make(chan error, 1)
	go func() { rerr <- rcv.Receive(4096) }()
	serr := make(chan error, 1)
	go func() { serr <- snd.Send(p, 1000) }()

	select {
	case <-rcv.FirstByte():
	case <-time.After(5 * time.Second):
		t.Fatal("no first byte")
	}
	if rcv.FirstByteAt().IsZero() {
		t.Error("first byte time not set")
	}
	time.Sleep(100 * time.Millisecond)
	snd.Stop()
	if err := <-serr; err != nil {
		t.Fatalf("send: %v", err)
	}
	snd.CloseWrite()
	if err := <-rerr; err != nil {
		t.Fatalf("receive: %v", err)
	}
	if !rcv.EOF() {
		t.Error("receiver did not see end of stream")
	}
	if snd.Bytes() == 0 || snd.Bytes() != rcv.Bytes() {
		t.Errorf("sent %d bytes, received %d", snd.Bytes(), rcv.Bytes())
	}
	// One call per message, and a few more where the socket took only part
	// of one.
	if msgs := snd.Bytes() / 1000; snd.Calls() < msgs || snd.Calls() > 2*msgs+1 {
		t.Errorf("%d send calls for %d bytes of 1000-byte messages", snd.Calls(), snd.Bytes())
	}
}

// TestStopWhileBlocked: a sender whose peer does not read fills the socket
// buffers and parks in the poller; Stop must still end it at once.
func TestStopWhileBlocked(t *testing.T) {
	a, _ := pair(t)
	snd, _ := NewStream(a)
	p, _ := NewPayload(spec.PayloadZeros, nil, 64<<10)
	done := make(chan error, 1)
	go func() { done <- snd.Send(p, 64<<10) }()
	// Wait until the buffers are full: the count stops moving.
	var last int64 = -1
	for i := 0; i < 100 && snd.Bytes() != last; i++ {
		last = snd.Bytes()
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	snd.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stopped send returned %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("send did not stop within 2s")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("stop took %v", d)
	}
}

func TestSendToClosedPeer(t *testing.T) {
	a, b := pair(t)
	snd, _ := NewStream(a)
	p, _ := NewPayload(spec.PayloadZeros, nil, 1<<10)
	b.SetLinger(0)
	b.Close()
	done := make(chan error, 1)
	go func() { done <- snd.Send(p, 1<<10) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("send to a reset peer returned nil")
		}
	case <-time.After(5 * time.Second):
		snd.Stop()
		t.Fatal("send to a reset peer did not fail")
	}
}

// TestNoAllocationPerMessage: the hot loops allocate a bounded amount
// however many messages they move.
func TestNoAllocationPerMessage(t *testing.T) {
	a, b := pair(t)
	snd, _ := NewStream(a)
	rcv, _ := NewStream(b)
	p, _ := NewPayload(spec.PayloadRandom, nil, 256)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rdone := make(chan error, 1)
	go func() { rdone <- rcv.Receive(256) }()
	sdone := make(chan error, 1)
	go func() { sdone <- snd.Send(p, 256) }()
	time.Sleep(200 * time.Millisecond)
	snd.Stop()
	<-sdone
	snd.CloseWrite()
	<-rdone
	runtime.ReadMemStats(&after)
	msgs := snd.Calls() + rcv.Calls()
	allocs := after.Mallocs - before.Mallocs
	if msgs < 1000 {
		t.Skipf("only %d calls in 200ms: machine too loaded to tell", msgs)
	}
	if allocs > uint64(msgs)/100 {
		t.Errorf("%d allocations for %d send/receive calls", allocs, msgs)
	}
	t.Logf("%d allocations for %d calls", allocs, msgs)
}

func TestOptionsAndInfo(t *testing.T) {
	a, b := pair(t)
	si, err := Info(a)
	if err != nil {
		t.Fatal(err)
	}
	// Linux doubles the asked size to leave room for its bookkeeping.
	if si.SndBuf < 256<<10 || si.RcvBuf < 256<<10 {
		t.Errorf("granted %d/%d for an asked 256K", si.SndBuf, si.RcvBuf)
	}
	if err := Configure(b, Options{CongestionControl: "no-such-cc"}); err == nil {
		t.Error("unknown congestion control accepted")
	}
	if runtime.GOOS == "linux" {
		if err := Configure(b, Options{CongestionControl: "reno", NoDelay: true}); err != nil {
			t.Fatal(err)
		}
		if si, _ := Info(b); si.CongestionControl != "reno" {
			t.Errorf("congestion control %q, want reno", si.CongestionControl)
		}
	}
}

// TestShortFileRing: a file payload shorter than the message wraps many
// times within one message.
func TestShortFileRing(t *testing.T) {
	a, b := pair(t)
	snd, _ := NewStream(a)
	rcv, _ := NewStream(b)
	p, _ := NewPayload(spec.PayloadFile, []byte("0123456789"), 100000)
	rdone := make(chan error, 1)
	go func() { rdone <- rcv.Receive(1 << 16) }()
	sdone := make(chan error, 1)
	go func() { sdone <- snd.Send(p, 100000) }()
	time.Sleep(50 * time.Millisecond)
	snd.Stop()
	if err := <-sdone; err != nil {
		t.Fatal(err)
	}
	snd.CloseWrite()
	<-rdone
	if snd.Bytes() == 0 || snd.Bytes() != rcv.Bytes() {
		t.Errorf("sent %d, received %d", snd.Bytes(), rcv.Bytes())
	}
}
