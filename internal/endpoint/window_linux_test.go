package endpoint

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/netdev"
	"wirespeed/internal/nstest"
	"wirespeed/internal/testkit"
)

// TestHostWindowQdiscTicks: the largest qdisc backlog of a window is the
// one seen at an interval tick, when the queue is empty at both ends. In
// a lab with a 1 Mbit/s tbf (a bucket of 3128 bytes, a queue of 3753:
// lab.TBF), the window opens on an empty queue, 12 datagrams of 400
// bytes (442 on the device) empty the bucket and queue the rest, a tick
// reads the queue, it drains, and the window closes: the window's largest
// backlog is the tick's (more than 0, at most the 12 datagrams), its end
// backlog 0, and the qdisc sent the 12 datagrams and dropped none (a
// fresh namespace may send an IPv6 packet of its own meanwhile: at
// least 12).
func TestHostWindowQdiscTicks(t *testing.T) {
	l := nstest.NewLab(t, lab.Config{RateBitsPerSecond: 1_000_000})
	var w *hostWindow
	var snd *net.UDPConn
	dst := netip.AddrPortFrom(l.A.IPv4, 40200)
	if err := l.Do(lab.B, func() (err error) {
		// The window's device client is opened in b's namespace and
		// keeps talking to it from any thread.
		w = newHostWindow("", 1, l.B.Dev)
		// Unconnected: the port unreachable that comes back must not
		// fail the next send.
		snd, err = net.ListenUDP("udp4", nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer w.release()
	defer snd.Close()
	if w.nd == nil {
		t.Fatalf("no device client: %v", w.warnings)
	}
	var rcv *net.UDPConn
	if err := l.Do(lab.A, func() (err error) { rcv, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(dst)); return err }); err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	// One through first, so that ARP is done and the datagrams below go
	// straight to the qdisc.
	snd.WriteToUDPAddrPort([]byte("x"), dst)
	rcv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := rcv.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, w)

	w.open()
	buf := make([]byte, 400)
	for range 12 {
		if _, err := snd.WriteToUDPAddrPort(buf, dst); err != nil {
			t.Fatal(err)
		}
	}
	w.tick()
	waitDrained(t, w)
	w.close()
	if w.wire == nil || w.wire.Qdisc == nil {
		t.Fatalf("no qdisc figures: %+v %v", w.wire, w.warnings)
	}
	q := w.wire.Qdisc
	if q.MaxBacklogBytes == 0 || q.MaxBacklogBytes > 12*442 || q.BacklogBytes != 0 {
		t.Errorf("backlog at the end %d, largest %d: want 0 and more than 0 (at most %d)", q.BacklogBytes, q.MaxBacklogBytes, 12*442)
	}
	if q.SentPackets < 12 || q.SentBytes < 12*442 || q.Drops != 0 {
		t.Errorf("qdisc sent %d packets, %d bytes, dropped %d; want at least 12 and %d, none dropped", q.SentPackets, q.SentBytes, q.Drops, 12*442)
	}
	t.Logf("largest backlog %d bytes, %d packets; sent %d packets, %d bytes", q.MaxBacklogBytes, q.MaxBacklogPackets, q.SentPackets, q.SentBytes)
}

// waitDrained waits until w's device's qdisc holds nothing.
func waitDrained(t *testing.T, w *hostWindow) {
	t.Helper()
	for range 100 {
		q, err := w.nd.QdiscCounters(w.dev)
		if err != nil {
			t.Fatal(err)
		}
		if q.BacklogPackets == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the qdisc did not drain in 5 s")
}

// TestHostWindowQdiscPeak: without interval ticks (-i 0) the window's
// largest backlog is still a maximum: a queue that fills in an instant
// and drains in about a second is seen by the peak sampler. In a lab
// with a 25 kbit/s tbf (a bucket of 3128 bytes, a queue of 3143:
// lab.TBF), 15 datagrams of 442 bytes on the device empty the bucket and
// fill the queue with 7 (3094 bytes); the test reads the backlog itself
// right after them. The window's largest must be at least half of it
// whatever the host does (no sampler is a second late), and at least it
// less what the link drains in 15 ms (46 bytes: the sampler's 10 ms and
// its goroutine's lateness), with nothing at the end. A host too busy to
// run the sampler on time gets three tries at the second, then the test
// skips as starved.
func TestHostWindowQdiscPeak(t *testing.T) {
	const rate = 25_000
	l := nstest.NewLab(t, lab.Config{RateBitsPerSecond: rate})
	dst := netip.AddrPortFrom(l.A.IPv4, 40201)
	var rcv *net.UDPConn
	if err := l.Do(lab.A, func() (err error) { rcv, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(dst)); return err }); err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	const drained15ms = rate / 8 * 15 / 1000
	var msg string
	for try := range 3 {
		h0 := testkit.ReadHostCPU("/proc")
		own, q := qdiscPeakTry(t, l, dst, rcv)
		t.Logf("try %d: the test read %d bytes queued; the window's largest %d (%d packets), at the end %d", try+1, own, q.MaxBacklogBytes, q.MaxBacklogPackets, q.BacklogBytes)
		if own == 0 {
			t.Fatal("the test's own read saw no queue: the datagrams did not queue")
		}
		if q.BacklogBytes != 0 || q.MaxBacklogBytes < uint64(own)/2 {
			t.Fatalf("backlog at the end %d, largest %d: want 0, and at least half the %d the test read", q.BacklogBytes, q.MaxBacklogBytes, own)
		}
		if int64(q.MaxBacklogBytes) >= int64(own)-drained15ms {
			return
		}
		msg = fmt.Sprintf("largest backlog %d: want at least the %d the test read less %d", q.MaxBacklogBytes, own, drained15ms)
		if starved := h0.Starved(testkit.ReadHostCPU("/proc")); starved == "" {
			t.Fatal(msg)
		} else {
			msg += "; " + starved
		}
	}
	testkit.SkipStarved(t, msg)
}

// qdiscPeakTry opens a host window on b's device, queues 15 datagrams
// toward dst, reads the backlog itself, waits for the queue to drain and
// closes the window: what the test read and the window's qdisc figures.
func qdiscPeakTry(t *testing.T, l *lab.Lab, dst netip.AddrPort, rcv *net.UDPConn) (own uint32, q netdev.QdiscWire) {
	t.Helper()
	var w *hostWindow
	var snd *net.UDPConn
	if err := l.Do(lab.B, func() (err error) {
		w = newHostWindow("", 1, l.B.Dev)
		snd, err = net.ListenUDP("udp4", nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer w.release()
	defer snd.Close()
	if w.nd == nil {
		t.Fatalf("no device client: %v", w.warnings)
	}
	snd.WriteToUDPAddrPort([]byte("x"), dst)
	rcv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := rcv.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, w)
	time.Sleep(200 * time.Millisecond) // the bucket fills again
	w.open()
	buf := make([]byte, 400)
	for range 15 {
		if _, err := snd.WriteToUDPAddrPort(buf, dst); err != nil {
			t.Fatal(err)
		}
	}
	c, err := w.nd.QdiscCounters(w.dev)
	if err != nil {
		t.Fatal(err)
	}
	waitDrained(t, w)
	w.close()
	if w.wire == nil || w.wire.Qdisc == nil {
		t.Fatalf("no qdisc figures: %+v %v", w.wire, w.warnings)
	}
	return c.BacklogBytes, *w.wire.Qdisc
}
