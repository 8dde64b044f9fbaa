//go:build !wirespeed_portable

package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// cmsg builds one control message by hand as the kernel lays it out on a
// 64-bit machine (struct cmsghdr: a size_t length, then level and type as
// ints, then the data, padded to 8 bytes).
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, (16+len(data)+7)&^7)
	binary.NativeEndian.PutUint64(b, uint64(16+len(data)))
	binary.NativeEndian.PutUint32(b[8:], uint32(level))
	binary.NativeEndian.PutUint32(b[12:], uint32(typ))
	copy(b[16:], data)
	return b
}

func le64s(v ...int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.NativeEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

func int32b(v int32) []byte {
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, uint32(v))
	return b
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// TestRxControl checks the hand-written control-message parser against
// control buffers built byte by byte.
func TestRxControl(t *testing.T) {
	if unix.SizeofCmsghdr != 16 {
		t.Skip("the hand-built messages are laid out for a 64-bit kernel")
	}
	const sec, nsec = 1_700_000_000, 123_456_789
	stamp := le64s(sec, nsec)
	wantAt := int64(sec)*1e9 + nsec
	tsNew := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, stamp)
	gro := cmsg(unix.SOL_UDP, unix.UDP_GRO, int32b(1200))
	truncated := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, stamp)[:20]
	tests := []struct {
		name    string
		b       []byte
		wantSeg int
		wantAt  int64
		wantOK  bool
	}{
		{"empty", nil, 0, 0, false},
		{"timestamp", tsNew, 0, wantAt, true},
		{"old-style timestamp", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_OLD, stamp), 0, wantAt, true},
		{"GRO then timestamp", cat(gro, tsNew), 1200, wantAt, true},
		{"timestamp then GRO", cat(tsNew, gro), 1200, wantAt, true},
		{"an unknown message is skipped", cat(cmsg(unix.SOL_IP, unix.IP_TOS, []byte{0x10}), tsNew), 0, wantAt, true},
		{"GRO alone", gro, 1200, 0, false},
		{"a zero stamp is none", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, le64s(0, 0)), 0, 0, false},
		{"a timestamp cut short by the buffer", cat(gro, truncated), 1200, 0, false},
		{"a timestamp too short for its data", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, stamp[:8]), 0, 0, false},
		{"a length of zero ends the walk", cat(make([]byte, 16), tsNew), 0, 0, false},
		{"a negative segment size is none", cmsg(unix.SOL_UDP, unix.UDP_GRO, int32b(-5)), 0, 0, false},
		{"a header shorter than a cmsghdr", tsNew[:12], 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seg, at, ok := rxControl(tt.b)
			if seg != tt.wantSeg || at != tt.wantAt || ok != tt.wantOK {
				t.Errorf("rxControl = %d, %d, %v; want %d, %d, %v", seg, at, ok, tt.wantSeg, tt.wantAt, tt.wantOK)
			}
		})
	}
	// x/sys's parser reads the same bytes the same way.
	msgs, err := unix.ParseSocketControlMessage(cat(gro, tsNew))
	if err != nil || len(msgs) != 2 {
		t.Fatalf("ParseSocketControlMessage: %d messages, %v", len(msgs), err)
	}
	if g := int32(binary.NativeEndian.Uint32(msgs[0].Data)); g != 1200 {
		t.Errorf("x/sys reads the GRO size as %d", g)
	}
	if s, n := int64(binary.NativeEndian.Uint64(msgs[1].Data)), int64(binary.NativeEndian.Uint64(msgs[1].Data[8:])); s*1e9+n != wantAt {
		t.Errorf("x/sys reads the stamp as %d.%09d", s, n)
	}
}

// TestRxControlAllocs: the parser allocates nothing, where x/sys's
// allocates on every call (the reason it is written by hand).
func TestRxControlAllocs(t *testing.T) {
	b := cat(cmsg(unix.SOL_UDP, unix.UDP_GRO, int32b(1200)), cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, le64s(1, 2)))
	if a := testing.AllocsPerRun(1000, func() { rxControl(b) }); a != 0 {
		t.Errorf("rxControl: %g allocations per call", a)
	}
	a := testing.AllocsPerRun(1000, func() { unix.ParseSocketControlMessage(b) })
	if a == 0 {
		t.Error("ParseSocketControlMessage no longer allocates: rxControl's comment is stale")
	}
	t.Logf("ParseSocketControlMessage: %g allocations per call", a)
}

// TestUDPPerDatagramStamps: on loopback, a paced sender's datagrams each
// arrive with a kernel receive stamp of its own. With a send batch, the
// datagrams that leave in one sendmmsg share the batch's send time and
// reach the receive path microseconds apart; by default, one write per
// datagram, each has a send time of its own.
func TestUDPPerDatagramStamps(t *testing.T) {
	for _, batch := range []int{udpBatch, 1} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) { udpPerDatagramStamps(t, batch) })
	}
}

func udpPerDatagramStamps(t *testing.T, batch int) {
	sc, rc := udpPair(t)
	const size, rate = 1000, 200e6 // a datagram every 40 µs
	const spacing = int64(size * 8 * 1e9 / rate)
	p, _ := NewPayload(spec.PayloadRandom, nil, size)
	snd, err := NewUDPSender(sc, p, size, rate)
	if err != nil {
		t.Fatal(err)
	}
	if err := snd.SetSendBatch(batch); err != nil {
		t.Fatal(err)
	}
	rcv, err := NewUDPReceiver(rc, size)
	if err != nil {
		t.Fatal(err)
	}
	if !rcv.stamps {
		t.Fatal("SO_TIMESTAMPNS refused")
	}
	var fd int
	rcv.rc.Control(func(f uintptr) { fd = int(f) })
	// The first socket to ask for stamps turns the kernel's stamping on
	// through a work queue; until it has run, datagrams are stamped when
	// read (rxstamp_linux.go).
	time.Sleep(50 * time.Millisecond)
	before := time.Now().UnixNano()
	sdone := make(chan error, 1)
	go func() { sdone <- snd.Run() }()

	// Read here rather than through the receiver's loop, to see each
	// datagram's stamps.
	type arrival struct {
		seq  uint64
		sent int64
		at   int64
	}
	var got []arrival
	b := newMmsgBatch(udpBatch, size)
	b.withControl(rxControlSpace)
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		n, e := b.recvmmsgWait(uintptr(fd)) // the socket is non-blocking here
		if e == unix.EAGAIN {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		if e != 0 {
			t.Fatal(e)
		}
		for i := range n {
			h := &b.hdrs[i]
			_, at, ok := rxControl(b.ctrl[i][:h.hdr.Controllen])
			if !ok {
				t.Fatalf("datagram %d of a batch came without a receive stamp", i)
			}
			d := b.bufs[i][:h.len]
			got = append(got, arrival{binary.BigEndian.Uint64(d), int64(binary.BigEndian.Uint64(d[8:])), at})
		}
	}
	snd.Stop()
	if err := <-sdone; err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixNano()
	st := snd.Counters()
	switch {
	case batch > 1 && st.Calls >= st.Packets:
		t.Fatalf("%d datagrams in %d sendmmsg calls: no batch held more than one", st.Packets, st.Calls)
	case batch == 1 && st.Calls != st.Packets:
		t.Fatalf("%d datagrams in %d calls without a send batch: want one call each", st.Packets, st.Calls)
	}
	if len(got) < 1000 {
		t.Fatalf("only %d datagrams arrived", len(got))
	}
	// Datagrams of one sendmmsg carry one send time and reach the receive
	// path microseconds apart, each with a kernel stamp of its own.
	sameBatch, sameSend := 0, 0
	for k := 1; k < len(got) && !t.Failed(); k++ {
		a, c := got[k-1], got[k]
		if c.seq != a.seq+1 {
			t.Fatalf("datagram %d after %d on loopback", c.seq, a.seq)
		}
		if c.sent < a.sent {
			t.Errorf("datagram %d stamped %d ns before the one before it", c.seq, a.sent-c.sent)
		}
		if c.sent == a.sent {
			sameSend++
		}
		if c.at <= a.at {
			t.Errorf("datagrams %d and %d have kernel stamps %d and %d", a.seq, c.seq, a.at, c.at)
		}
		if c.at-a.at < spacing/4 {
			sameBatch++
		}
	}
	for _, a := range []arrival{got[0], got[len(got)-1]} {
		if a.at < before || a.at > after {
			t.Errorf("kernel stamp %d outside the test's wall-clock span %d..%d", a.at, before, after)
		}
	}
	switch {
	case batch > 1 && (sameBatch == 0 || sameSend == 0):
		t.Errorf("%d pairs arrived close enough to have shared a batch, %d pairs shared a send time: want both", sameBatch, sameSend)
	case batch == 1 && sameSend != 0:
		t.Errorf("%d pairs of datagrams shared a send time with one write each: want a clock read per datagram", sameSend)
	}
	t.Logf("%d datagrams in %d send calls; %d arrived within %d ns of the one before, %d pairs shared a send time",
		st.Packets, st.Calls, sameBatch, spacing/4, sameSend)
}

// TestUDPReceiverGROStamps feeds the receiver's per-message path a batch
// built by hand: a lone datagram, a buffer GRO joined from three with one
// kernel stamp, and a datagram without a stamp. Only the first of the
// joined three gives the jitter a sample; the unstamped one takes the
// batch's clock read.
func TestUDPReceiverGROStamps(t *testing.T) {
	if unix.SizeofCmsghdr != 16 {
		t.Skip("the hand-built messages are laid out for a 64-bit kernel")
	}
	r := &UDPReceiver{tr: newSeqTracker(), epochWall: 1_700_000_000e9}
	b := newMmsgBatch(3, 300)
	b.withControl(rxControlSpace)
	put := func(i, off int, seq, sent uint64) {
		binary.BigEndian.PutUint64(b.bufs[i][off:], seq)
		binary.BigEndian.PutUint64(b.bufs[i][off+8:], sent)
	}
	setCtrl := func(i int, c []byte) {
		copy(b.ctrl[i], c)
		b.hdrs[i].hdr.SetControllen(len(c))
	}
	stamp := func(ns int64) []byte {
		at := r.epochWall + ns
		return cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, le64s(at/1e9, at%1e9))
	}
	// Datagram 0, sent at 0, stamped at 500: transit 500.
	put(0, 0, 0, 0)
	b.hdrs[0].len = 100
	setCtrl(0, stamp(500))
	// Datagrams 1..3 joined in 100-byte segments, sent at 10, 20, 30,
	// stamped once at 530: transit 520 for the first.
	put(1, 0, 1, 10)
	put(1, 100, 2, 20)
	put(1, 200, 3, 30)
	b.hdrs[1].len = 300
	setCtrl(1, cat(cmsg(unix.SOL_UDP, unix.UDP_GRO, int32b(100)), stamp(530)))
	// Datagram 4, sent at 40, no stamp: the call's clock read, 700.
	put(2, 0, 4, 40)
	b.hdrs[2].len = 100
	setCtrl(2, nil)
	clk := callClock{at: 700, read: true}
	for i := range 3 {
		if !r.handleMsg(b, i, &clk) {
			t.Fatal("a data datagram read as the end of stream")
		}
	}
	// Transits 500, 520, (none for 2 and 3), 660: D = 20, 140.
	// J1 = 20/16 = 1.25; J2 = 1.25 + (140 - 1.25)/16 = 9.921875.
	if want := 9.921875; math.Abs(r.tr.jitter-want) > 1e-9 {
		t.Errorf("jitter %g ns, want %g", r.tr.jitter, want)
	}
	if r.tr.unique != 5 || r.tr.lost != 0 || r.ctr.coalesced.Load() != 1 {
		t.Errorf("unique %d lost %d coalesced %d, want 5 0 1", r.tr.unique, r.tr.lost, r.ctr.coalesced.Load())
	}
}

// TestUDPLoopsNoAllocation: the UDP loops, with a stamp per datagram on
// both sides (and GRO's joined buffers), allocate a bounded amount however
// many datagrams they move.
func TestUDPLoopsNoAllocation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size, gso int
		rate      float64
		sbatch    int // sends per call; 0 leaves the default, one
		rbatch    int // datagrams per receive call; 0 leaves the default
		clocked   bool
	}{
		{"paced", 1200, 0, 200e6, 0, 0, false},
		{"paced gso+gro", 12000, 1200, 200e6, 0, 0, false},
		{"unpaced one per call", 64, 0, 0, 0, 0, false},
		{"unpaced one per call, clocked", 64, 0, 0, 0, 0, true},
		{"unpaced batches", 64, 0, 0, 64, 64, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, rc := udpPair(t)
			p, _ := NewPayload(spec.PayloadRandom, nil, tc.size)
			snd, err := NewUDPSender(sc, p, tc.size, tc.rate)
			if err != nil {
				t.Fatal(err)
			}
			rcv, _ := NewUDPReceiver(rc, tc.size)
			if err := rcv.SetKernelStamps(!tc.clocked); err != nil {
				t.Fatal(err)
			}
			if tc.sbatch > 0 {
				if err := snd.SetSendBatch(tc.sbatch); err != nil {
					t.Fatal(err)
				}
				if err := rcv.SetRecvBatch(tc.rbatch); err != nil {
					t.Fatal(err)
				}
			}
			if tc.gso > 0 {
				if err := snd.SetGSO(tc.gso); err != nil {
					t.Fatal(err)
				}
				if err := rcv.EnableGRO(); err != nil {
					t.Fatal(err)
				}
			}
			rdone := make(chan error, 1)
			sdone := make(chan error, 1)
			allocs, msgs := testkit.CountAllocs(t, 2000, 200*time.Millisecond, func() {
				go func() { rdone <- rcv.Run() }()
				go func() { sdone <- snd.Run() }()
			}, func() int64 { return snd.Counters().Calls + rcv.Counters().Calls }, func() {
				snd.Stop()
				<-sdone
				snd.Finish()
				select {
				case <-rdone:
				case <-time.After(3 * time.Second):
					rcv.Stop()
					<-rdone
				}
			})
			// Setting up the loops (batches, the stop and end of stream,
			// their threads) takes some 90; one allocation per call would
			// be thousands.
			if allocs > testkit.LoopSetupAllocs+uint64(msgs)/100 {
				t.Errorf("%d allocations for %d send/receive calls", allocs, msgs)
			}
			if rcv.Counters().Packets == 0 || rcv.Counters().JitterNanos == 0 {
				t.Errorf("received %d datagrams, jitter %g", rcv.Counters().Packets, rcv.Counters().JitterNanos)
			}
			t.Logf("%d allocations for %d calls, %d datagrams", allocs, msgs, rcv.Counters().Packets)
		})
	}
}

// TestUDPReceiverUnstampedClock: datagrams without a kernel stamp take
// their arrival time from one clock read per receive call, made when the
// first of them needs it: their transit is that read (which the test
// brackets with its own reads of the wall clock) minus their send time,
// and a stamped datagram does not read the clock at all.
func TestUDPReceiverUnstampedClock(t *testing.T) {
	epoch := time.Now()
	r := &UDPReceiver{tr: newSeqTracker(), epoch: epoch, epochWall: epoch.UnixNano()}
	b := newMmsgBatch(2, 64)
	b.withControl(rxControlSpace)
	for i := range 2 {
		binary.BigEndian.PutUint64(b.bufs[i][0:], uint64(i))
		binary.BigEndian.PutUint64(b.bufs[i][8:], uint64(100*i))
		b.hdrs[i].len = 64
		b.hdrs[i].hdr.SetControllen(0)
	}
	var clk callClock
	before := time.Now().UnixNano() - r.epochWall
	if !r.handleMsg(b, 0, &clk) {
		t.Fatal("a data datagram read as the end of stream")
	}
	after := time.Now().UnixNano() - r.epochWall
	if !clk.read || clk.at < before || clk.at > after {
		t.Fatalf("clock read %v at %d, want one between %d and %d", clk.read, clk.at, before, after)
	}
	if r.tr.lastTransit != clk.at {
		t.Errorf("transit %d, want the clock read %d minus send time 0", r.tr.lastTransit, clk.at)
	}
	first := clk.at
	time.Sleep(time.Millisecond)
	if !r.handleMsg(b, 1, &clk) {
		t.Fatal("a data datagram read as the end of stream")
	}
	// The same call: the same read, not a new one a millisecond later.
	if want := first - 100; r.tr.lastTransit != want {
		t.Errorf("second datagram's transit %d, want %d (the call's one clock read minus 100)", r.tr.lastTransit, want)
	}
	// A stamped datagram in a new call leaves the clock unread.
	stamped := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, le64s((r.epochWall+5000)/1e9, (r.epochWall+5000)%1e9))
	copy(b.ctrl[0], stamped)
	b.hdrs[0].hdr.SetControllen(len(stamped))
	binary.BigEndian.PutUint64(b.bufs[0][0:], 2)
	binary.BigEndian.PutUint64(b.bufs[0][8:], 1000)
	var clk2 callClock
	r.handleMsg(b, 0, &clk2)
	if clk2.read || r.tr.lastTransit != 4000 {
		t.Errorf("stamped datagram: clock read %v, transit %d, want no read and 5000-1000", clk2.read, r.tr.lastTransit)
	}
}

// TestUDPReceiverClocked: a receiver that times arrivals by its clock
// (SetKernelStamps(false)) receives with recvfrom, one call per datagram,
// asks the kernel for no stamps, and counts loss, reordering and
// duplicates exactly as the stamped one does: through a real socket, the
// datagrams 0 1 2 4 3 3 6 7 and the end of stream saying 8 were sent are
// 7 distinct ones, 1 lost (5), 1 late (3, after 4), 1 duplicate (the
// second 3), in 9 receive calls (8 and the end of stream's); the transits are
// the test's own clock reads around the sends, less the send stamps.
func TestUDPReceiverClocked(t *testing.T) {
	sc, rc := udpPair(t)
	rcv, err := NewUDPReceiver(rc, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := rcv.SetKernelStamps(false); err != nil {
		t.Fatal(err)
	}
	var on int
	withFD(rc, func(fd int) error {
		on, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW)
		return err
	})
	if on != 0 || rcv.KernelStamps() {
		t.Fatalf("SO_TIMESTAMPNS_NEW %d, KernelStamps %v after SetKernelStamps(false)", on, rcv.KernelStamps())
	}
	before := time.Since(rcv.epoch)
	for _, seq := range []uint64{0, 1, 2, 4, 3, 3, 6, 7} {
		b := make([]byte, 64)
		formatWirespeed.stamp(b, seq, uint64(time.Since(rcv.epoch)))
		if _, err := sc.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	fin := make([]byte, 64)
	binary.BigEndian.PutUint64(fin[:8], finSeq)
	binary.BigEndian.PutUint64(fin[8:], 8)
	sc.Write(fin)
	done := make(chan error, 1)
	go func() { done <- rcv.Run() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		rcv.Stop()
		t.Fatal("no end of stream within 5 s")
	}
	after := time.Since(rcv.epoch)
	c := rcv.Counters()
	if c.Packets != 7 || c.Lost != 1 || c.OutOfOrder != 1 || c.Duplicates != 1 || c.Bytes != 8*64 {
		t.Errorf("counted %+v, want 7 datagrams, 1 lost, 1 late, 1 duplicate, 512 bytes", c)
	}
	if c.Calls != 9 {
		t.Errorf("%d receive calls for 8 datagrams and the end of stream, want one each", c.Calls)
	}
	if tr := rcv.tr.lastTransit; tr < 0 || tr > int64(after-before) {
		t.Errorf("last transit %d ns, want between 0 and the %d ns the test took", tr, after-before)
	}
	if w := rcv.Window(); w.SenderTotal != 8 {
		t.Errorf("sender total %d, want the end of stream's 8", w.SenderTotal)
	}
}
