package engine

import (
	"math"
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
