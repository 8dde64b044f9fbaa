package engine

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

func TestPayload(t *testing.T) {
	p, err := NewPayload(spec.PayloadRandom, nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p.ring != 64<<10 || len(p.buf) != 64<<10+1000 {
		t.Fatalf("ring %d, buf %d", p.ring, len(p.buf))
	}
	// The ring is 64 KiB (the LZ4 window) for messages of up to 16 KiB,
	// 68 KiB for larger ones, 72 KiB for a message of a whole number of
	// 68 KiB rings: worked out by hand for each size.
	for _, c := range []struct{ size, ring int }{{1, 64 << 10}, {16 << 10, 64 << 10}, {16<<10 + 1, 68 << 10}, {20 << 10, 68 << 10},
		{64 << 10, 68 << 10}, {68 << 10, 72 << 10}, {136 << 10, 72 << 10}, {1 << 20, 68 << 10}} {
		q, err := NewPayload(spec.PayloadRandom, nil, c.size)
		if err != nil {
			t.Fatal(err)
		}
		if q.ring != c.ring {
			t.Errorf("messages of %d bytes: ring %d, want %d", c.size, q.ring, c.ring)
		}
	}
	// A hot ring is three messages, at most 24 KiB, at least one message.
	for _, c := range []struct{ size, ring int }{{1, 3}, {1 << 10, 3 << 10}, {8 << 10, 24 << 10}, {10 << 10, 24 << 10}, {64 << 10, 64 << 10}} {
		q, err := NewPayload(spec.PayloadHot, nil, c.size)
		if err != nil {
			t.Fatal(err)
		}
		if q.ring != c.ring || len(q.buf) != c.ring+c.size || bytes.Count(q.buf[:min(c.ring, 4096)], []byte{0}) > 100 {
			t.Errorf("hot payload of %d-byte messages: ring %d of %d bytes, want %d of random bytes", c.size, q.ring, len(q.buf), c.ring)
		}
		if m := PayloadMemory(spec.PayloadHot, 0, c.size); m != int64(len(q.buf)) {
			t.Errorf("hot payload of %d-byte messages: PayloadMemory %d, allocated %d", c.size, m, len(q.buf))
		}
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
	ln := testkit.Listen(t)
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
	p, _ := NewPayload(spec.PayloadRandom, nil, 1000)
	snd, _ := NewTCPSender(a, p, 1000)
	rcv, _ := NewTCPReceiver(b, 4096)

	rerr := make(chan error, 1)
	go func() { rerr <- rcv.Run() }()
	serr := make(chan error, 1)
	go func() { serr <- snd.Run() }()

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
	snd.Finish()
	if err := <-rerr; err != nil {
		t.Fatalf("receive: %v", err)
	}
	if !rcv.Ended() {
		t.Error("receiver did not see end of stream")
	}
	if snd.Counters().Bytes == 0 || snd.Counters().Bytes != rcv.Counters().Bytes {
		t.Errorf("sent %d bytes, received %d", snd.Counters().Bytes, rcv.Counters().Bytes)
	}
	// One call per message, and a few more where the socket took only part
	// of one.
	if msgs := snd.Counters().Bytes / 1000; snd.Counters().Calls < msgs || snd.Counters().Calls > 2*msgs+1 {
		t.Errorf("%d send calls for %d bytes of 1000-byte messages", snd.Counters().Calls, snd.Counters().Bytes)
	}
}

// TestStopWhileBlocked: a sender whose peer does not read fills the socket
// buffers and parks in the poller; Stop must still end it at once.
func TestStopWhileBlocked(t *testing.T) {
	a, _ := pair(t)
	p, _ := NewPayload(spec.PayloadZeros, nil, 64<<10)
	snd, _ := NewTCPSender(a, p, 64<<10)
	done := make(chan error, 1)
	go func() { done <- snd.Run() }()
	// Wait until the buffers are full: the count stops moving.
	var last int64 = -1
	for i := 0; i < 100 && snd.Counters().Bytes != last; i++ {
		last = snd.Counters().Bytes
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
	p, _ := NewPayload(spec.PayloadZeros, nil, 1<<10)
	snd, _ := NewTCPSender(a, p, 1<<10)
	b.SetLinger(0)
	b.Close()
	done := make(chan error, 1)
	go func() { done <- snd.Run() }()
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
	p, _ := NewPayload(spec.PayloadRandom, nil, 256)
	snd, _ := NewTCPSender(a, p, 256)
	rcv, _ := NewTCPReceiver(b, 256)
	checkPairAllocs(t, snd, rcv)
}

// checkPairAllocs runs a TCP sender and receiver until they have made at
// least 1000 calls over at least 200 ms, stops them, and fails t if the
// process allocated more than testkit.LoopSetupAllocs plus one per hundred
// calls meanwhile.
func checkPairAllocs(t *testing.T, snd *TCPSender, rcv *TCPReceiver) {
	t.Helper()
	rdone := make(chan error, 1)
	sdone := make(chan error, 1)
	allocs, msgs := testkit.CountAllocs(t, 1000, 200*time.Millisecond, func() {
		go func() { rdone <- rcv.Run() }()
		go func() { sdone <- snd.Run() }()
	}, func() int64 { return snd.Counters().Calls + rcv.Counters().Calls }, func() {
		snd.Stop()
		<-sdone
		snd.Finish()
		<-rdone
	})
	if allocs > testkit.LoopSetupAllocs+uint64(msgs)/100 {
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
	if linuxEngine {
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
	p, _ := NewPayload(spec.PayloadFile, []byte("0123456789"), 100000)
	snd, _ := NewTCPSender(a, p, 100000)
	rcv, _ := NewTCPReceiver(b, 1<<16)
	rdone := make(chan error, 1)
	go func() { rdone <- rcv.Run() }()
	sdone := make(chan error, 1)
	go func() { sdone <- snd.Run() }()
	time.Sleep(50 * time.Millisecond)
	snd.Stop()
	if err := <-sdone; err != nil {
		t.Fatal(err)
	}
	snd.Finish()
	<-rdone
	if snd.Counters().Bytes == 0 || snd.Counters().Bytes != rcv.Counters().Bytes {
		t.Errorf("sent %d, received %d", snd.Counters().Bytes, rcv.Counters().Bytes)
	}
}

// TestErrUnsupported checks that what the package returns for a missing
// feature matches errors.ErrUnsupported as well as ErrUnsupported.
func TestErrUnsupported(t *testing.T) {
	for _, err := range []error{ErrUnsupported, errNoPlatform} {
		if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v: want it to match errors.ErrUnsupported and ErrUnsupported", err)
		}
	}
}

// TestRRLoops: request/response transactions over a TCP pair: the
// server answered every transaction the client completed (and at most
// the one in flight when it stopped), and the client timed each one but
// the one it drained.
// Runs the Linux loops, and the portable ones under -tags
// wirespeed_portable.
func TestRRLoops(t *testing.T) {
	a, b := pair(t)
	srv, err := NewRRServer(b, 64, 128)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewRRClient(a, 64, 128, 1)
	if err != nil {
		t.Fatal(err)
	}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Run() }()
	cl.MarkWindow()
	clErr := make(chan error, 1)
	go func() { clErr <- cl.Run() }()
	time.Sleep(200 * time.Millisecond)
	cl.Stop()
	if err := <-clErr; err != nil {
		t.Fatalf("client: %v", err)
	}
	if err := cl.Finish(); err != nil {
		t.Fatalf("finish: %v", err)
	}
	// Finish is a shutdown on Linux and nothing in the portable loops,
	// whose callers close the connection: end the stream either way.
	a.CloseWrite()
	select {
	case err := <-srvErr:
		if err != nil {
			t.Fatalf("server: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not end at the client's end of stream")
	}
	c, s := cl.Counters().Packets, srv.Counters().Packets
	if c < 10 || s < c || s > c+1 {
		t.Errorf("client completed %d transactions, server answered %d; want at least 10, and the server's count the client's or one more", c, s)
	}
	// Every transaction completed is timed but the one a stopped client
	// drains (counted, not timed).
	if n := cl.Latency().TotalCount(); n > c || n < c-1 {
		t.Errorf("%d latencies recorded for %d transactions", n, c)
	}
	if !srv.Ended() {
		t.Error("server did not see the client's end")
	}
}

// Info reads back what the kernel granted the socket, as the loops'
// Info methods do (sockInfo).
func Info(c *net.TCPConn) (SocketInfo, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return SocketInfo{}, err
	}
	var (
		si   SocketInfo
		gerr error
	)
	if err := rc.Control(func(fd uintptr) { si, gerr = sockInfo(fd) }); err != nil {
		return SocketInfo{}, err
	}
	return si, gerr
}
