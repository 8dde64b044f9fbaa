//go:build !wirespeed_portable

package engine

import (
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// kernelTCPInfo reads TCP_INFO of a loop's socket straight from the
// kernel.
func kernelTCPInfo(t *testing.T, s interface {
	SyscallConn() (syscall.RawConn, error)
}) *unix.TCPInfo {
	t.Helper()
	rc, err := s.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var (
		ti   *unix.TCPInfo
		gerr error
	)
	if err := rc.Control(func(fd uintptr) { ti, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return ti
}

// TestTCPSenderLimit: a sender with a limit writes exactly that many
// bytes, the last write cut short, and returns by itself; the kernel's
// own counts (TCP_INFO bytes_acked on the sender, bytes_received on the
// receiver) agree.
func TestTCPSenderLimit(t *testing.T) {
	const limit = 100<<20 + 12345 // not a multiple of the write size
	a, b := pair(t)
	p, _ := NewPayload(spec.PayloadRandom, nil, 128<<10)
	snd, _ := NewTCPSender(a, p, 128<<10)
	snd.SetLimit(limit)
	rcv, _ := NewTCPReceiver(b, 128<<10)
	rdone := make(chan error, 1)
	go func() { rdone <- rcv.Run() }()
	sdone := make(chan error, 1)
	go func() { sdone <- snd.Run() }()
	select {
	case err := <-sdone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		snd.Stop()
		t.Fatalf("the sender did not stop by itself at its limit; sent %d", snd.Counters().Bytes)
	}
	if !snd.Reached() {
		t.Error("Reached is false after the limit was sent")
	}
	snd.Finish()
	select {
	case err := <-rdone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		rcv.Stop()
		t.Fatal("no end of stream at the receiver")
	}
	if got := snd.Counters().Bytes; got != limit {
		t.Errorf("sender counted %d bytes, want %d", got, limit)
	}
	if got := rcv.Counters().Bytes; got != limit {
		t.Errorf("receiver counted %d bytes, want %d", got, limit)
	}
	if want := int64(limit/(128<<10) + 1); snd.Counters().Calls < want {
		t.Errorf("%d writes for %d bytes of 128 KiB writes", snd.Counters().Calls, limit)
	}
	if !rcv.Ended() {
		t.Error("receiver did not see the end of stream")
	}
	// The kernel's counts, once the receiver read the FIN (its ACK may
	// still be on its way to the sender).
	if !testkit.WaitFor(2*time.Second, func() bool { return kernelTCPInfo(t, snd).Bytes_acked >= limit+2 }) {
		t.Errorf("sender's bytes_acked %d, want %d", kernelTCPInfo(t, snd).Bytes_acked, limit)
	}
	// Linux counts the SYN and the FIN in bytes_acked (each takes a
	// sequence number), and the FIN in bytes_received.
	if got := kernelTCPInfo(t, snd).Bytes_acked; got != limit+2 {
		t.Errorf("sender's TCP_INFO bytes_acked %d, want %d and 2 for the SYN and the FIN", got, limit)
	}
	if got := kernelTCPInfo(t, rcv).Bytes_received; got != limit+1 {
		t.Errorf("receiver's TCP_INFO bytes_received %d, want %d and 1 for the FIN", got, limit)
	}
}

// TestUDPSenderLimit: a UDP sender with a limit sends exactly that many
// datagrams and returns by itself; a plain reader, not the engine's,
// counts them.
func TestUDPSenderLimit(t *testing.T) {
	const limit, size = 3001, 1000
	sc, rc := udpPair(t)
	p, _ := NewPayload(spec.PayloadRandom, nil, size)
	snd, err := NewUDPSender(sc, p, size, 100e6) // slow enough for loopback to lose none
	if err != nil {
		t.Fatal(err)
	}
	snd.SetLimit(limit)
	// The reader reads until the sender is done and then drains the
	// socket, its deadline set only then: a deadline from the reader's
	// own start gave up on a sender that a busy machine started more
	// than its 500 ms late, and counted 0 datagrams of a correct run.
	got := make(chan int, 1)
	go func() {
		buf := make([]byte, 2*size)
		n := 0
		for {
			k, err := rc.Read(buf)
			if err != nil {
				got <- n
				return
			}
			if k == size {
				n++
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- snd.Run() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		snd.Stop()
		t.Fatalf("the sender did not stop by itself at its limit; sent %d", snd.Counters().Packets)
	}
	// Loopback delivered every datagram before the send returned; the
	// reader has them in its socket buffer (4 MB) to drain.
	rc.SetReadDeadline(time.Now().Add(2 * time.Second))
	if c := snd.Counters(); c.Packets != limit || c.Bytes != limit*size {
		t.Errorf("sender counted %d datagrams, %d bytes; want %d, %d", c.Packets, c.Bytes, limit, limit*size)
	}
	if n := <-got; n != limit {
		t.Errorf("the reader got %d datagrams of %d bytes, want %d", n, size, limit)
	}
}

// TestTCPSenderRate: a paced TCP sender holds its rate, by the kernel's
// count of the bytes the receiver acknowledged (TCP_INFO bytes_acked) over
// 3 s, within 2%.
func TestTCPSenderRate(t *testing.T) {
	testkit.Serial(t)
	const rate = 200e6
	testkit.RetryRate(t, 3, func(int) testkit.RateAttempt {
		a, b := pair(t)
		p, _ := NewPayload(spec.PayloadRandom, nil, 128<<10)
		snd, _ := NewTCPSender(a, p, 128<<10)
		snd.SetRate(rate)
		rcv, _ := NewTCPReceiver(b, 128<<10)
		rdone := make(chan error, 1)
		go func() { rdone <- rcv.Run() }()
		sdone := make(chan error, 1)
		go func() { sdone <- snd.Run() }()
		defer func() {
			snd.Stop()
			<-sdone
			snd.Finish()
			<-rdone
		}()
		time.Sleep(300 * time.Millisecond)
		t0, a0, h0 := time.Now(), kernelTCPInfo(t, snd).Bytes_acked, testkit.ReadHostCPU()
		time.Sleep(3 * time.Second)
		t1, a1, h1 := time.Now(), kernelTCPInfo(t, snd).Bytes_acked, testkit.ReadHostCPU()
		got := 8 * float64(a1-a0) / t1.Sub(t0).Seconds()
		// The host's CPU over the window is the evidence of starvation:
		// the loops alone have no CPU figures of their own.
		return testkit.RateAttempt{Got: got, Want: rate, Tol: 0.02, Starved: h0.Starved(h1),
			Detail: "TCP_INFO bytes_acked over 3 s"}
	})
}

// TestNoAllocationPerPacedMessage: a paced TCP sender, whose pacer reads
// the clock per write and sleeps now and then, allocates a bounded amount
// however many messages it moves, as the unpaced loop does.
func TestNoAllocationPerPacedMessage(t *testing.T) {
	a, b := pair(t)
	p, _ := NewPayload(spec.PayloadRandom, nil, 256)
	snd, _ := NewTCPSender(a, p, 256)
	snd.SetRate(1e8) // 20 us a message: a sleep about every 50
	rcv, _ := NewTCPReceiver(b, 256)
	checkPairAllocs(t, snd, rcv)
	if !snd.pace.waited.Load() {
		t.Error("the pacer never slept: the test did not reach the sleeping path")
	}
}
