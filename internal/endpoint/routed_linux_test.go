package endpoint

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/engine"
	"wirespeed/internal/lab"
	"wirespeed/internal/measure"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestUDPLossOnRouter places every lost datagram: a floods b at 200 Mbit/s
// through a router whose egress toward b is a 20 Mbit/s tbf with a 4 KB
// queue, for 2 s. What the sender numbered and the receiver never got, over
// the connection's life, must equal exactly what the router's qdisc dropped
// (its own drop counter, over netlink) plus what b's kernel dropped at the
// socket (Udp RcvbufErrors in b's namespace); and the run's lost count, as
// both sides and result.Join make it over the window, plus what was lost
// before the window opened, must equal the same.
//
// The datagrams carry iperf3's header, which has no end-of-stream
// datagrams: wirespeed's are sent into the full queue after the last data
// and some are dropped there, counted by the qdisc but not as lost data.
//
// The receiver opens its window at its first datagram and a goroutine
// hand-off later: on a loaded machine that has been over a hundred
// datagrams in (CI, 2026-12-01: the 123rd, with 27 of b's socket drops
// before it). So that the window's loss is the whole run's in the usual
// case, b's socket buffer is forced to 8 MiB (nothing overflows while its
// loop starts) and the tbf's bucket is 1 MB (nothing is shaped away in the
// first 700 datagrams); where the window still opens late, the datagrams
// lost before it are accounted for, not assumed away.
func TestUDPLossOnRouter(t *testing.T) {
	r := nstest.NewRouted(t, lab.RoutedConfig{RateBitsPerSecond: 20_000_000, LimitBytes: 4096, BurstBytes: 1 << 20})
	a, b := r.Host(lab.A), r.Host(lab.B)
	if r.Limit != 4096 {
		t.Fatalf("tbf queue %d bytes, want 4096", r.Limit)
	}

	aAddr := netip.AddrPortFrom(a.IPv4, 40001)
	bAddr := netip.AddrPortFrom(b.IPv4, 40002)
	var snd, rcv *net.UDPConn
	if err := r.Do(lab.B, func() (err error) {
		rcv, err = net.DialUDP("udp4", net.UDPAddrFromAddrPort(bAddr), net.UDPAddrFromAddrPort(aAddr))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	forceRcvBuf(t, rcv, 8<<20)
	if err := r.Do(lab.A, func() (err error) {
		snd, err = net.DialUDP("udp4", net.UDPAddrFromAddrPort(aAddr), net.UDPAddrFromAddrPort(bAddr))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	// One datagram through first, so both hops' neighbours are resolved:
	// datagrams waiting for ARP are queued and dropped outside the qdisc.
	snd.Write([]byte("x"))
	rcv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := rcv.Read(make([]byte, 64)); err != nil {
		t.Fatalf("a -> router -> b: %v", err)
	}
	rcv.SetReadDeadline(time.Time{})

	// b's counters, read through the /proc/PID/net of a process in b.
	sleep := exec.Command("sleep", "30")
	if err := r.Start(lab.B, sleep); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	root := t.TempDir()
	if err := os.Symlink(filepath.Join("/proc", strconv.Itoa(sleep.Process.Pid), "net"), filepath.Join(root, "net")); err != nil {
		t.Fatal(err)
	}
	bCounters := func() measure.NetCounters {
		c, err := measure.ReadNetCounters(root)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	sp := spec.Default()
	sp.Kind, sp.SendSize, sp.RateBitsPerSecond = spec.UDPStream, 1400, 200e6
	sp.Duration, sp.Omit, sp.Interval = 2*time.Second, 0, 0
	hdr := []engine.UDPOption{engine.Iperf3Header(true)}

	_, drops0, err := r.RouterQdisc()
	if err != nil {
		t.Fatal(err)
	}
	before := bCounters()
	var (
		wg             sync.WaitGroup
		sres, rres     result.SideResult
		sndErr, rcvErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		rres, rcvErr = Run(context.Background(), Config{Spec: sp, Side: result.Remote, Sends: spec.ServerToClient, ProcRoot: root,
			UDPOptions: hdr, DrainTimeout: 300 * time.Millisecond, FirstByteGrace: time.Second,
			Conns: []Conn{{ID: 1, Dir: spec.ClientToServer, Conn: rcv}}})
	}()
	go func() {
		defer wg.Done()
		sres, sndErr = Run(context.Background(), Config{Spec: sp, Side: result.Local, Sends: spec.ClientToServer, ProcRoot: root,
			UDPOptions: hdr, Conns: []Conn{{ID: 1, Dir: spec.ClientToServer, Conn: snd}}})
	}()
	wg.Wait()
	if sndErr != nil || rcvErr != nil {
		t.Fatalf("sender: %v; receiver: %v", sndErr, rcvErr)
	}
	time.Sleep(100 * time.Millisecond) // what the queue still held reaches b
	_, drops1, err := r.RouterQdisc()
	if err != nil {
		t.Fatal(err)
	}
	rcvbuf := bCounters().Delta(before).UDP.RcvbufErrors
	drops := int64(drops1 - drops0)

	res := result.Join(sp, sres, rres)
	u := res.Directions[0].Summary.UDPSummary
	st := res.Streams[0]
	// Over the connection's life: numbered by the sender, never arrived.
	lifeLost := st.Sender.TotalPackets - st.Receiver.TotalPackets
	// Before the window: numbered below its first, less those that arrived.
	preLost := int64(st.Receiver.SeqFirst) - (st.Receiver.TotalPackets - st.Receiver.SeqUnique)
	t.Logf("sent %d (first of the window %d, total %d), received %d, lost %d (before the window %d, over the life %d); router tbf drops %d, b RcvbufErrors %d",
		u.PacketsSent, st.Receiver.SeqFirst, st.Sender.TotalPackets, u.PacketsReceived, u.Lost, preLost, lifeLost, drops, rcvbuf)
	if drops == 0 || u.LossPct < 50 {
		t.Fatalf("offered 10x the shaped rate but the router dropped %d and %.1f%% was lost: the test shows nothing", drops, u.LossPct)
	}
	if want := drops + rcvbuf; lifeLost != want {
		t.Errorf("over the connection's life %d sent, %d received: lost %d, want the router's tbf drops %d + b's RcvbufErrors %d = %d",
			st.Sender.TotalPackets, st.Receiver.TotalPackets, lifeLost, drops, rcvbuf, want)
	}
	if preLost < 0 {
		t.Errorf("%d datagrams numbered before the window %d but %d arrived", st.Receiver.SeqFirst, st.Receiver.SeqFirst, st.Receiver.TotalPackets-st.Receiver.SeqUnique)
	}
	if got, want := u.Lost, drops+rcvbuf-preLost; got != want {
		t.Errorf("lost %d in the window, want the router's tbf drops %d + b's RcvbufErrors %d - %d lost before the window = %d", got, drops, rcvbuf, preLost, want)
	}
}

// forceRcvBuf sets c's receive buffer to n bytes past net.core.rmem_max
// (SO_RCVBUFFORCE; the test runs as root).
func forceRcvBuf(t *testing.T, c *net.UDPConn, n int) {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n)
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatalf("SO_RCVBUFFORCE %d: %v", n, serr)
	}
}
