package iperf3

import (
	"errors"
	"testing"
)

// TestTakenBytes: acked and queued read around an acknowledgement count
// each byte once. Worked by hand: the kernel has taken 180 bytes, 100
// acked and 80 queued; 50 are acknowledged while the queue is read, so
// the reads give acked 100, queue 30, acked 150: 100 + 30 and 150 + 80
// are both wrong, the second read of the pair (150, 30, 150) is 180.
// The old order (queue 80 first, then acked 150) said 230.
func TestTakenBytes(t *testing.T) {
	acks := []int64{100, 150, 150}
	queues := []int{30, 30}
	ai, qi := 0, 0
	acked := func() (int64, error) { ai++; return acks[ai-1], nil }
	queued := func() (int, error) { qi++; return queues[qi-1], nil }
	n, err := takenBytes(acked, queued)
	if err != nil || n != 180 {
		t.Errorf("taken %d, %v; want 180", n, err)
	}

	// Acks that never settle: 5000 bytes taken, each read of acked
	// finds 2 more acknowledged, and the queue read between two of them
	// holds what was unacknowledged halfway (5000 - acked - 1). After
	// takenTries the sum is the queue with the acked count read before
	// it, 4999, never more than was taken (with the one after, 5001).
	a := int64(0)
	n, err = takenBytes(func() (int64, error) { a += 2; return a, nil }, func() (int, error) { return int(5000 - a - 1), nil })
	if err != nil || n != 4999 {
		t.Errorf("unsettled: taken %d, %v; want 4999", n, err)
	}

	boom := errors.New("boom")
	if _, err := takenBytes(func() (int64, error) { return 0, boom }, queued); !errors.Is(err, boom) {
		t.Errorf("acked's error: %v", err)
	}
}
