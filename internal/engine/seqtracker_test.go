package engine

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSeqTracker checks the receiver's accounting against counts worked
// out by hand for each sequence of arrivals.
func TestSeqTracker(t *testing.T) {
	type counts struct{ unique, lost, ooo, dup int64 }
	tests := []struct {
		name string
		seqs []uint64
		want counts
	}{
		{"in order", []uint64{0, 1, 2, 3}, counts{4, 0, 0, 0}},
		{"a gap stays lost", []uint64{0, 1, 4, 5}, counts{4, 2, 0, 0}},
		{"a late datagram fills its gap", []uint64{0, 2, 1, 3}, counts{4, 0, 1, 0}},
		{"two late datagrams", []uint64{0, 3, 2, 1, 4}, counts{5, 0, 2, 0}},
		{"a duplicate is not counted again", []uint64{0, 1, 1, 2}, counts{3, 0, 0, 1}},
		{"a duplicate of a late one", []uint64{0, 2, 1, 1, 3}, counts{4, 0, 1, 1}},
		{"first number above zero counts the numbers before it lost", []uint64{5, 6}, counts{2, 5, 0, 0}},
		{"late arrival just inside the window", []uint64{0, seqWindow, 1}, counts{3, seqWindow - 2, 1, 0}},
		{"too old to place is taken as late", []uint64{0, seqWindow + 5, 2}, counts{3, seqWindow + 3, 1, 0}},
		{"a jump past the whole window forgets the ring", []uint64{0, 1, 3 * seqWindow, 3*seqWindow + 1}, counts{4, 3*seqWindow - 2, 0, 0}},
		{"the ring wraps: a number one window later is new, not a duplicate", []uint64{0, 1, seqWindow, seqWindow + 1}, counts{4, seqWindow - 2, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newSeqTracker()
			for _, s := range tt.seqs {
				tr.add(s, 0)
			}
			got := counts{tr.unique, tr.lost, tr.ooo, tr.dup}
			if got != tt.want {
				t.Errorf("after %v: unique %d lost %d out-of-order %d dup %d, want %d %d %d %d",
					short(tt.seqs), got.unique, got.lost, got.ooo, got.dup, tt.want.unique, tt.want.lost, tt.want.ooo, tt.want.dup)
			}
		})
	}
}

func short(s []uint64) []uint64 {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// TestSeqTrackerWindow holds the window's count to datagrams numbered
// from the window's first on: ones from before the mark, even late ones,
// are not the window's.
func TestSeqTrackerWindow(t *testing.T) {
	tr := newSeqTracker()
	for _, s := range []uint64{0, 1, 3} { // 2 is missing
		tr.add(s, 0)
	}
	tr.markWindow() // the window starts at 4
	for _, s := range []uint64{4, 2, 6, 5} {
		tr.add(s, 0)
	}
	if tr.winFirst != 4 {
		t.Errorf("window starts at %d, want 4", tr.winFirst)
	}
	if tr.winUnique != 3 {
		t.Errorf("window counted %d datagrams, want 3 (4, 5, 6; 2 is from before)", tr.winUnique)
	}
	if tr.unique != 7 || tr.lost != 0 {
		t.Errorf("unique %d lost %d, want 7 0", tr.unique, tr.lost)
	}
}

// TestSeqTrackerJitter checks RFC 3550's estimator against values worked
// out by hand: J += (|D| - J)/16 over the changes D in transit time.
func TestSeqTrackerJitter(t *testing.T) {
	tr := newSeqTracker()
	transits := []int64{1000, 1160, 1000, 1000} // D: 160, -160, 0
	for i, tt := range transits {
		tr.add(uint64(i), tt)
	}
	// J1 = 160/16 = 10; J2 = 10 + (160-10)/16 = 19.375; J3 = 19.375 - 19.375/16.
	want := 19.375 - 19.375/16
	if math.Abs(tr.jitter-want) > 1e-9 {
		t.Errorf("jitter %.6f ns, want %.6f", tr.jitter, want)
	}
	// A duplicate carries no new transit: jitter is unchanged.
	tr.add(3, 99999)
	if math.Abs(tr.jitter-want) > 1e-9 {
		t.Errorf("a duplicate moved the jitter to %.6f", tr.jitter)
	}
}

// TestUDPReceiverJitterPerDatagram feeds the receiver datagrams with their
// own send and arrival times and checks the jitter against values worked
// out by hand, in order of arrival (RFC 3550 takes D between consecutive
// arrivals, whatever their numbers), with a datagram that has no arrival
// time of its own (GRO) left out of it.
func TestUDPReceiverJitterPerDatagram(t *testing.T) {
	dgram := func(seq, sent uint64) []byte {
		b := make([]byte, 64)
		formatWirespeed.stamp(b, seq, sent)
		return b
	}
	type arr struct {
		seq, sent uint64
		at        int64
		timed     bool
	}
	tests := []struct {
		name string
		in   []arr
		want float64
	}{
		{
			// Sent 100 ns apart; transits 1000, 1010, 990, 1050, 1000,
			// D = 10, -20, 60, -50: J = 0.625, 1.8359375,
			// 1.8359375 + 58.1640625/16 = 5.47119140625,
			// 5.47119140625 + 44.52880859375/16 = 8.254241943359375.
			"in order", []arr{{0, 0, 1000, true}, {1, 100, 1110, true}, {2, 200, 1190, true}, {3, 300, 1350, true}, {4, 400, 1400, true}},
			8.254241943359375,
		},
		{
			// Arrivals 0, 2, 1, 3 (untimed), 4: transits 1000, 1050,
			// 1160, -, 1020; D = 50, 110, -140 (4 against 1):
			// J = 3.125, 3.125 + 106.875/16 = 9.8046875,
			// 9.8046875 + 130.1953125/16 = 17.94189453125.
			"late and untimed", []arr{{0, 0, 1000, true}, {2, 200, 1250, true}, {1, 100, 1260, true}, {3, 300, 0, false}, {4, 400, 1420, true}},
			17.94189453125,
		},
		{
			// One batch time for all (the old stamping): sent 0 for
			// each, arrivals 10 apart: D = 10, 10; J = 0.625,
			// 0.625 + 9.375/16 = 1.2109375.
			"equal send stamps", []arr{{0, 0, 1000, true}, {1, 0, 1010, true}, {2, 0, 1020, true}},
			1.2109375,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &UDPReceiver{tr: newSeqTracker()}
			for _, a := range tt.in {
				r.handle(dgram(a.seq, a.sent), a.at, a.timed)
			}
			if math.Abs(r.tr.jitter-tt.want) > 1e-9 {
				t.Errorf("jitter %.9f ns, want %.9f", r.tr.jitter, tt.want)
			}
			if r.tr.unique != int64(len(tt.in)) {
				t.Errorf("counted %d of %d datagrams", r.tr.unique, len(tt.in))
			}
		})
	}
}

// TestUDPSenderStamps: every datagram of a batch, and every GSO segment
// of a send, carries its sequence number and the batch's one send time,
// paced or not: they go to the kernel together.
func TestUDPSenderStamps(t *testing.T) {
	read := func(b []byte) (uint64, uint64) {
		return binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])
	}
	s := &UDPSender{size: 1000, rate: 8e6}
	bufs := [][]byte{make([]byte, 1000), make([]byte, 1000), make([]byte, 1000)}
	s.stampBatch(bufs, 5, 1, 123456789)
	for i, b := range bufs {
		if seq, at := read(b); seq != uint64(5+i) || at != 123456789 {
			t.Errorf("datagram %d: seq %d stamped %d, want %d 123456789", i, seq, at, 5+i)
		}
	}
	// GSO: 1000-byte sends cut in 400, 400, 200: seq 3..8, one time.
	s.gso = 400
	s.stampBatch(bufs[:2], 3, 3, 42)
	for k := range 6 {
		if seq, at := read(bufs[k/3][(k%3)*400:]); seq != uint64(3+k) || at != 42 {
			t.Errorf("segment %d: seq %d at %d, want %d 42", k, seq, at, 3+k)
		}
	}
}

// refTracker is the sequence accounting done the plain way, one bit at a
// time over a skipped gap: the reference for seqTracker's word-wise
// clearing.
type refTracker struct {
	next                   uint64
	seen                   []uint64
	unique, lost, ooo, dup int64
}

func (r *refTracker) bit(seq uint64) (int, uint64) {
	i := seq % seqWindow
	return int(i / 64), 1 << (i % 64)
}

func (r *refTracker) place(seq uint64) {
	switch {
	case seq >= r.next:
		if seq-r.next >= seqWindow {
			clear(r.seen)
		} else {
			for s := r.next; s < seq; s++ {
				w, m := r.bit(s)
				r.seen[w] &^= m
			}
		}
		r.lost += int64(seq - r.next)
		r.next = seq + 1
	case r.next-seq > seqWindow:
		r.ooo++
		r.lost--
		r.unique++
		return
	default:
		w, m := r.bit(seq)
		if r.seen[w]&m != 0 {
			r.dup++
			return
		}
		r.ooo++
		r.lost--
	}
	w, m := r.bit(seq)
	r.seen[w] |= m
	r.unique++
}

// TestSeqTrackerGapMatchesReference compares the tracker with refTracker
// over arrivals that skip gaps of every awkward length (within a word,
// exactly a word, one either side, seqWindow-1, around the ring's end),
// late ones and duplicates, from every bit position in a word. Both rings
// start with the same random bits, so a bit cleared wrongly, or one left
// set, shows.
func TestSeqTrackerGapMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gaps := []uint64{0, 1, 2, 62, 63, 64, 65, 127, 128, 129, 191, 4096, seqWindow - 65, seqWindow - 64, seqWindow - 63, seqWindow - 2, seqWindow - 1}
	for start := range uint64(64) {
		tr := newSeqTracker()
		ref := refTracker{seen: make([]uint64, seqWindow/64)}
		for i := range tr.seen {
			tr.seen[i] = rng.Uint64()
		}
		copy(ref.seen, tr.seen)
		// Begin a little before the ring's end, at each bit of a word, so
		// that gaps wrap around it.
		tr.next = 3*seqWindow - 200 + start
		ref.next = tr.next
		for step := range 12 {
			var seq uint64
			switch k := rng.IntN(10); {
			case k < 6:
				seq = tr.next + gaps[rng.IntN(len(gaps))]
			case k < 7:
				seq = tr.next + rng.Uint64N(seqWindow)
			case k < 9:
				seq = tr.next - 1 - rng.Uint64N(seqWindow+10) // late, a duplicate, or too old
			default:
				seq = tr.next - 1 // a duplicate of the last one
			}
			tr.add(seq, 0)
			ref.place(seq)
			if tr.next != ref.next || tr.unique != ref.unique || tr.lost != ref.lost || tr.ooo != ref.ooo || tr.dup != ref.dup {
				t.Fatalf("start %d step %d seq %d: next %d unique %d lost %d ooo %d dup %d, reference %d %d %d %d %d",
					start, step, seq, tr.next, tr.unique, tr.lost, tr.ooo, tr.dup, ref.next, ref.unique, ref.lost, ref.ooo, ref.dup)
			}
			for i := range tr.seen {
				if tr.seen[i] != ref.seen[i] {
					t.Fatalf("start %d step %d seq %d: ring word %d is %#x, reference %#x", start, step, seq, i, tr.seen[i], ref.seen[i])
				}
			}
		}
	}
}

// TestSeqTrackerHostileGaps: a peer that skips seqWindow-1 numbers with
// every datagram is counted right; each one costs one pass over the ring,
// not a million bit operations (BenchmarkSeqTrackerHostileGap shows the
// cost).
func TestSeqTrackerHostileGaps(t *testing.T) {
	const n = 2000
	tr := newSeqTracker()
	seq := uint64(0)
	for range n {
		tr.add(seq, 0)
		seq += seqWindow
	}
	if want := int64((n - 1) * (seqWindow - 1)); tr.unique != n || tr.lost != want || tr.ooo != 0 || tr.dup != 0 {
		t.Errorf("unique %d lost %d ooo %d dup %d, want %d %d 0 0", tr.unique, tr.lost, tr.ooo, tr.dup, n, want)
	}
	// Only the datagrams' own bits are set: the last one's, at
	// (n-1)*seqWindow, which is bit 0 of the ring.
	for i, w := range tr.seen {
		want := uint64(0)
		if i == 0 {
			want = 1
		}
		if w != want {
			t.Fatalf("ring word %d is %#x after the hostile gaps, want %#x", i, w, want)
		}
	}
}

// BenchmarkSeqTrackerHostileGap is the cost of a datagram that skips
// seqWindow-1 numbers, the most a gap can skip before the ring is cleared
// whole.
func BenchmarkSeqTrackerHostileGap(b *testing.B) {
	tr := newSeqTracker()
	seq := uint64(0)
	for b.Loop() {
		tr.add(seq, 0)
		seq += seqWindow
	}
}
