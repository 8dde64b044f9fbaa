//go:build !wirespeed_portable

package engine_test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/engine"
	"wirespeed/internal/lab"
	"wirespeed/internal/measure"
	"wirespeed/internal/nstest"
	"wirespeed/internal/spec"
)

// TestUDPSendErrorsMatchKernel holds the sender's count of refused
// datagrams to the kernel's. In a namespace of its own (no other socket
// counts there), an unpaced sender floods a 10 Mbit/s tbf with
// datagrams below the MTU. The kernel's Udp SndbufErrors counts two
// things: each send it refused to the program (EAGAIN when the socket
// buffer is full, which the engine counts and retries), and each datagram
// it took and then lost to a full qdisc (tbf's enqueue returns
// NET_XMIT_DROP; udp_send_skb counts it and, without IP_RECVERR, reports
// success). So over the run, exactly:
//
//	SndbufErrors = engine's SendErrors + tbf's drop counter
//
// With the default socket buffer the qdisc's short queue fills first and
// nearly every loss is a silent drop; with a socket buffer smaller than
// that queue the socket fills first and the kernel refuses sends. The IP
// layer counts each one again, as OutDiscards.
func TestUDPSendErrorsMatchKernel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sndbuf int    // SO_SNDBUF asked for; 0 keeps the default
		size   int    // datagram bytes
		rate   uint64 // the tbf's, bits per second
	}{
		{"default socket buffer", 0, 1400, 10_000_000},
		{"small socket buffer", 4096, 1400, 10_000_000},
		// 9216-byte datagrams over a 1500-byte MTU leave in 7 fragments:
		// the datagram is lost when one of them is dropped, and the rest
		// are freed unsent; the kernel counts the datagram once.
		{"fragmented", 0, 9216, 100_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) { udpSendErrorsMatchKernel(t, tc.sndbuf, tc.size, tc.rate) })
	}
}

func udpSendErrorsMatchKernel(t *testing.T, sndbuf, size int, rate uint64) {
	l := nstest.NewLab(t, lab.Config{RateBitsPerSecond: rate})
	a := l.Host(lab.A)
	c, rcv := labUDP(t, l)
	if sndbuf > 0 {
		if err := c.SetWriteBuffer(sndbuf); err != nil {
			t.Fatal(err)
		}
	}

	ns, err := netns.GetFromName(a.Netns)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	nl, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	drops := func() int64 {
		link, err := nl.LinkByName(a.Dev)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := nl.QdiscList(link)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if q, ok := q.(*netlink.Tbf); ok && q.Statistics != nil && q.Statistics.Queue != nil {
				return int64(q.Statistics.Queue.Drops)
			}
		}
		t.Fatalf("no tbf statistics on %s", a.Dev)
		return 0
	}

	p, err := engine.NewPayload(spec.PayloadZeros, nil, size)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewUDPSender(c, p, size, 0)
	if err != nil {
		t.Fatal(err)
	}
	// b reads every datagram and notes its sequence number (the first 8
	// bytes of wirespeed's header), to tell which arrived and how often.
	if err := rcv.SetReadBuffer(8 << 20); err != nil {
		t.Fatal(err)
	}
	got := make(chan map[uint64]int, 1)
	go func() {
		seen := map[uint64]int{}
		buf := make([]byte, 65536)
		for {
			rcv.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			n, err := rcv.Read(buf)
			if err != nil {
				got <- seen
				return
			}
			if n >= 8 {
				seen[binary.BigEndian.Uint64(buf[:8])]++
			}
		}
	}()
	before, drops0 := nsCounters(t, l, lab.A), drops()
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	time.Sleep(time.Second)
	s.Stop()
	if err := <-done; err != nil {
		t.Fatalf("sender: %v", err)
	}
	// Let the queue drain: what tbf holds is neither dropped nor refused.
	time.Sleep(200 * time.Millisecond)
	d := nsCounters(t, l, lab.A).Delta(before)
	qdrops := drops() - drops0
	ctr := s.Counters()
	t.Logf("sent %d, send errors %d; kernel Udp SndbufErrors %d, OutDatagrams %d, Ip OutDiscards %d, FragFails %d, FragCreates %d; tbf drops %d",
		ctr.Packets, ctr.SendErrors, d.UDP.SndbufErrors, d.All["Udp.OutDatagrams"], d.IP.OutDiscards, d.IP.FragFails, d.IP.FragCreates, qdrops)
	if ctr.SendErrors+qdrops == 0 {
		t.Fatalf("no send errors and no drops: the flood did not fill the link, the test shows nothing")
	}
	if sndbuf > 0 && ctr.SendErrors == 0 {
		t.Fatalf("no send errors with a %d-byte socket buffer: the kernel refused nothing, the test shows nothing", sndbuf)
	}
	// The tbf drops whatever packet meets its full queue: now and then one
	// the kernel sends on its own (IPv6 neighbour discovery or MLD on the
	// new veth), which no UDP counter sees. Up to otherDrops of them are
	// allowed between the tbf's count and the UDP ones.
	const otherDrops = 3
	near := func(got, want int64) bool { return got <= want && want-got <= otherDrops }
	if got, want := d.UDP.SndbufErrors, ctr.SendErrors+qdrops; !near(got, want) {
		t.Errorf("kernel SndbufErrors %d, want the engine's send errors %d + tbf drops %d = %d", got, ctr.SendErrors, qdrops, want)
	}
	// The kernel counts each of them a second time, in the IP layer:
	// OutDiscards, for a refused send (__ip_append_data's error path) and
	// for a datagram the qdisc dropped (ip_send_skb).
	if d.IP.OutDiscards != d.UDP.SndbufErrors {
		t.Errorf("kernel Ip OutDiscards %d, want Udp SndbufErrors %d: each refusal and drop counted in both", d.IP.OutDiscards, d.UDP.SndbufErrors)
	}
	// A fragmented datagram is dropped by its first fragment the qdisc
	// refuses (the rest are freed, not queued): one drop, one FragFails.
	if size > 1500 && !near(d.IP.FragFails, qdrops) {
		t.Errorf("kernel Ip FragFails %d, want the tbf's drops %d", d.IP.FragFails, qdrops)
	}
	// With nothing dropped on the way, b got each datagram the engine
	// counted as sent exactly once, numbered 0 to sent-1: a refused one
	// was sent again under its own number, neither skipped nor doubled.
	seen := <-got
	if qdrops == 0 {
		dups := 0
		for _, k := range seen {
			dups += k - 1
		}
		missing := 0
		for seq := range uint64(ctr.Packets) {
			if seen[seq] == 0 {
				missing++
			}
		}
		if dups != 0 || missing != 0 || int64(len(seen)) != ctr.Packets {
			t.Errorf("b got %d distinct datagrams, %d twice or more, %d of 0..%d missing; want each of the %d sent once",
				len(seen), dups, missing, ctr.Packets-1, ctr.Packets)
		}
	}
	// Every datagram the engine counts as sent the kernel took once:
	// OutDatagrams counts those it passed on, SndbufErrors less the
	// refusals those it took and lost.
	if got, want := d.All["Udp.OutDatagrams"]+qdrops, ctr.Packets; !near(want, got) {
		t.Errorf("kernel OutDatagrams %d + tbf drops %d = %d, want the engine's datagrams sent %d", d.All["Udp.OutDatagrams"], qdrops, got, want)
	}
}

// TestUDPSendCallsPerDatagram holds the sender to what netperf's -m means,
// one send call per datagram, unless a send batch is asked for: then one
// sendmmsg per batch. The engine's call counter is checked against the
// kernel's counts, which it did not compute: the datagrams the kernel
// took (Udp OutDatagrams of a namespace of the test's own), and, for the
// default, the write system calls of the process (syscw of /proc/self/io,
// which counts write(2) but not sendmmsg(2)). With GSO a send call is
// still one send, of datagrams the kernel makes.
func TestUDPSendCallsPerDatagram(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch int // 0 leaves the default
		size  int
		gso   int // UDP_SEGMENT datagram size; 0 for none
	}{
		{"default 64 B", 0, 64, 0},
		{"default 1472 B", 0, 1472, 0},
		{"batch 8", 8, 64, 0},
		{"batch 64", 64, 1472, 0},
		// One send call of 8 datagrams that the kernel makes.
		{"gso", 0, 8 * 1000, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) { udpSendCallsPerDatagram(t, tc.batch, tc.size, tc.gso) })
	}
}

func udpSendCallsPerDatagram(t *testing.T, batch, size, gso int) {
	l := nstest.NewNamespacePair(t)
	c, _ := labUDP(t, l)

	p, err := engine.NewPayload(spec.PayloadZeros, nil, size)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewUDPSender(c, p, size, 0)
	if err != nil {
		t.Fatal(err)
	}
	if batch > 0 {
		if err := s.SetSendBatch(batch); err != nil {
			t.Fatal(err)
		}
	}
	segs := int64(1)
	if gso > 0 {
		if err := s.SetGSO(gso); err != nil {
			t.Fatal(err)
		}
		segs = int64(size / gso)
	}
	// Nobody reads b's socket: what it drops is b's, and a's counters
	// see only the sending.
	before, w0 := nsCounters(t, l, lab.A), syscw(t)
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	time.Sleep(300 * time.Millisecond)
	s.Stop()
	if err := <-done; err != nil {
		t.Fatalf("sender: %v", err)
	}
	writes := syscw(t) - w0
	d := nsCounters(t, l, lab.A).Delta(before)
	ctr := s.Counters()
	out := d.All["Udp.OutDatagrams"]
	t.Logf("batch %d: %d datagrams in %d calls, %d send errors; kernel Udp OutDatagrams %d, SndbufErrors %d; write calls %d",
		batch, ctr.Packets, ctr.Calls, ctr.SendErrors, out, d.UDP.SndbufErrors, writes)
	if ctr.Packets < 200 {
		t.Fatalf("only %d datagrams sent: the test shows nothing", ctr.Packets)
	}
	// The kernel counts a GSO send once, however many datagrams it cuts
	// it into.
	if out*segs != ctr.Packets {
		t.Errorf("kernel Udp OutDatagrams %d (sends of %d datagrams), want the engine's datagrams sent %d", out, segs, ctr.Packets)
	}
	per := int64(max(batch, 1)) * segs // datagrams per call
	// Each call sends a whole batch but when the kernel refuses one of
	// its datagrams (a send error), which ends the call early.
	if ctr.Calls*per < ctr.Packets || ctr.Calls*per-ctr.Packets > (per-1)*ctr.SendErrors {
		t.Errorf("%d calls of %d datagrams for %d datagrams sent with %d send errors; want calls = datagrams / %d",
			ctr.Calls, per, ctr.Packets, ctr.SendErrors, per)
	}
	// The Go runtime writes now and then on threads of its own (to wake
	// its poller): a few writes more than the loop's are allowed.
	const otherWrites = 50
	switch {
	case batch <= 1 && (writes < ctr.Calls || writes > ctr.Calls+otherWrites):
		t.Errorf("the process made %d write calls; want the sender's %d, one per datagram (and up to %d of the runtime's)", writes, ctr.Calls, otherWrites)
	case batch > 1 && writes > otherWrites:
		t.Errorf("the process made %d write calls with a send batch of %d; want none of the sender's: it sends with sendmmsg", writes, batch)
	}
}

// labUDP returns a UDP socket in l's namespace a connected to rcv, one
// listening on b's IPv4 address in b's, both closed when the test ends.
// One datagram has gone from snd to rcv, so that b's address is resolved:
// datagrams waiting for ARP are queued and may be dropped by the
// neighbour table before any counter of the tests sees them.
func labUDP(t *testing.T, l *lab.Lab) (snd, rcv *net.UDPConn) {
	t.Helper()
	b := l.Host(lab.B)
	if err := l.Do(lab.B, func() (err error) {
		rcv, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(b.IPv4, 0)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rcv.Close() })
	if err := l.Do(lab.A, func() (err error) {
		snd, err = net.DialUDP("udp4", nil, rcv.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snd.Close() })
	snd.Write(make([]byte, 64))
	rcv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := rcv.Read(make([]byte, 2048)); err != nil {
		t.Fatalf("first datagram: %v", err)
	}
	return snd, rcv
}

// nsCounters reads the network counters of the namespace of l's host.
func nsCounters(t *testing.T, l *lab.Lab, host lab.HostName) measure.NetCounters {
	t.Helper()
	var nc measure.NetCounters
	if err := l.Do(host, func() (err error) {
		nc, err = measure.ReadNetCounters("/proc/thread-self")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return nc
}

// syscw is the write system calls the process has made (/proc/self/io).
func syscw(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no per-process I/O accounting: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("/proc/self/io: %q", line)
			}
			return n
		}
	}
	t.Fatalf("/proc/self/io has no syscw")
	return 0
}
