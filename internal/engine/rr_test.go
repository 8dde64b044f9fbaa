package engine

import (
	"io"
	"testing"
	"time"

	"wirespeed/internal/testkit"
)

// TestRRClientLatency times transactions against a peer that answers
// each request 2 ms after reading it, and checks the latencies recorded
// in nanoseconds against what the test itself knows: none can be shorter
// than the peer's 2 ms, and with one transaction in flight they follow
// one another, so together they take no longer than the test's own clock
// says the run took (Little's law with one in the system).
func TestRRClientLatency(t *testing.T) {
	const delay = 2 * time.Millisecond
	c, s := testkit.TCPPair(t)
	go func() {
		b := make([]byte, 1)
		for {
			if _, err := io.ReadFull(s, b); err != nil {
				return
			}
			time.Sleep(delay)
			if _, err := s.Write(b); err != nil {
				return
			}
		}
	}()
	r, err := NewRRClient(c, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.MarkWindow()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- r.Run() }()
	ok := testkit.WaitFor(10*time.Second, func() bool { return r.Counters().Packets >= 30 })
	r.Stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	if !ok {
		t.Fatalf("%d transactions in 10 s, want 30", r.Counters().Packets)
	}
	h := r.Latency()
	n := h.TotalCount()
	t.Logf("%d transactions in %v: min %d ns, mean %.0f ns", n, wall, h.Min(), h.Mean())
	if n < 30 {
		t.Fatalf("%d latencies recorded, want 30 or more", n)
	}
	// The histogram keeps 3 significant figures: a value may read 0.1%
	// low.
	if min := time.Duration(h.Min()); min < delay*999/1000 {
		t.Errorf("shortest latency %v, shorter than the peer's %v delay", min, delay)
	}
	if sum := time.Duration(h.Mean() * float64(n)); sum > wall+wall/1000 {
		t.Errorf("%d latencies add up to %v, more than the %v the run took", n, sum, wall)
	}
}
