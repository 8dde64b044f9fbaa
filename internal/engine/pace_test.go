package engine

import (
	"math"
	"testing"
	"time"
)

// TestPacer checks the pacer's schedule against times worked out from
// its rate: 8 Mbit/s is 1 µs a byte, so 1000-byte sends are due 1 ms
// apart. Each case times a run of sends with the test's own clock; a
// loaded machine only makes the sleeps longer, so the lower bounds hold
// whatever the load (the upper bounds are loose for the same reason).
func TestPacer(t *testing.T) {
	never := func() bool { return false }
	const size = 1000 // bytes a send: 1 ms at 8 Mbit/s
	// sends returns how long n sends took.
	sends := func(p *pacer, n int) time.Duration {
		start := time.Now()
		for range n {
			p.wait(size, never)
		}
		return time.Since(start)
	}
	t.Run("rate", func(t *testing.T) {
		// 50 sends: the first is due at once, the 50th 49 ms later;
		// the loop sleeps only when more than paceSlack (1 ms) ahead,
		// so it ends at least 48 ms in.
		p := newPacer(8e6)
		if took := sends(p, 50); took < 48*time.Millisecond || took > 2*time.Second {
			t.Errorf("50 sends of 1000 bytes at 8 Mbit/s took %v, want 48 ms or more", took)
		}
		if !p.waited.Load() {
			t.Error("the pacer delayed no send")
		}
	})
	t.Run("idle credit capped", func(t *testing.T) {
		// After 50 ms idle the schedule may be at most paceSlack
		// behind: 20 ms of sends then take at least 20 - 1 (credit) -
		// 1 (slack) = 18 ms, not 0 as a schedule 50 ms behind would.
		p := newPacer(8e6)
		p.wait(size, never)
		time.Sleep(50 * time.Millisecond)
		if took := sends(p, 20); took < 18*time.Millisecond || took > 2*time.Second {
			t.Errorf("20 ms of sends after 50 ms idle took %v, want 18 ms or more: the idle time was paid back as a burst", took)
		}
	})
	t.Run("stream credit", func(t *testing.T) {
		// A TCP sender may catch up on 100 ms (streamCredit), no
		// more: after 300 ms idle, 200 ms of sends take at least
		// 200 - 100 - 1 = 99 ms, and catch up at least 100 ms of
		// their schedule, so take at most 100 ms + 1 ms + the sleeps'
		// lateness.
		p := newStreamPacer(8e6, size)
		if p.credit != streamCredit {
			t.Fatalf("credit %v, want %v: one write of 1 ms is less", p.credit, streamCredit)
		}
		p.wait(size, never)
		time.Sleep(300 * time.Millisecond)
		if took := sends(p, 200); took < 99*time.Millisecond || took > 2*time.Second {
			t.Errorf("200 ms of sends after 300 ms idle took %v, want 99 ms or more", took)
		}
		// A write longer than the credit raises it to one write's
		// time and the slack: 2 MB at 8 Mbit/s is 2 s.
		if p := newStreamPacer(8e6, 2_000_000); p.credit != 2*time.Second+paceSlack {
			t.Errorf("credit %v for 2 s writes, want 2.001s", p.credit)
		}
	})
	t.Run("no rate", func(t *testing.T) {
		for _, r := range []float64{0, -1} {
			if p := newPacer(r); p != nil {
				t.Errorf("newPacer(%g) = %+v, want nil (no pacing)", r, p)
			}
		}
	})
}

// TestUDPSenderDue checks the UDP sender's schedule against times worked
// out from its rate, which counts payload bytes only (as -b means, and
// iperf3's): 8 Mbit/s of 1000-byte datagrams is 1000 datagrams a second,
// so the 2000th is due 2 s after the start, and 1 s in 1001 are allowed
// (the first at once).
func TestUDPSenderDue(t *testing.T) {
	s := &UDPSender{rate: 8e6, size: 1000, batch: 4}
	start := time.Now()
	n, next := s.due(start, 2000)
	if d := next.Sub(start) - 2*time.Second; n != 0 || d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("after 2000 datagrams at once: %d sends allowed, the next due %v after the start; want 0, 2s", n, next.Sub(start))
	}
	// A second into the schedule 1001 are due; after 995 sent, a
	// batch of 4 more.
	if n, _ := s.due(time.Now().Add(-time.Second), 995); n != 4 {
		t.Errorf("1 s in, 995 sent: %d sends allowed, want a batch of 4", n)
	}
	s.rate = 0
	if n, next := s.due(start, 1e9); n != 4 || !next.IsZero() {
		t.Errorf("unpaced: %d sends allowed, next %v; want a batch of 4 at once", n, next)
	}
}

// TestPacerSaturates: a rate so small that one byte's time is past
// time.Duration's range must hold the sender back, not overflow into a
// schedule in the past that never sleeps (issue 32: 1e-300 bits/s made
// UDP_STREAM -R spin at 100% CPU for 12 datagrams in 10 s).
func TestPacerSaturates(t *testing.T) {
	for _, rate := range []float64{1e-300, 1e-12, 1e-8, math.SmallestNonzeroFloat64} {
		for _, p := range []*pacer{newPacer(rate), newStreamPacer(rate, 1<<20)} {
			if p == nil {
				t.Fatalf("rate %g: no pacer", rate)
			}
			p.wait(1472, func() bool { return true }) // the first send
			calls := 0
			start := time.Now()
			p.wait(1472, func() bool { calls++; return calls > 2 })
			if !p.waited.Load() || calls < 3 {
				t.Errorf("rate %g: the second send did not wait (stopped asked %d times)", rate, calls)
			}
			if el := time.Since(start); el < 15*time.Millisecond {
				t.Errorf("rate %g: the second send waited only %v", rate, el)
			}
			if p.due.Before(time.Now()) {
				t.Errorf("rate %g: the next send is due at %v, in the past", rate, p.due)
			}
		}
	}
}

// TestUDPDueSaturates: the UDP sender's schedule at a tiny rate puts the
// next datagram in the future, never in the past.
func TestUDPDueSaturates(t *testing.T) {
	for _, rate := range []float64{1e-300, 1e-12, 8} {
		s := &UDPSender{rate: rate, size: 1472, batch: 1}
		start := time.Now()
		n, next := s.due(start, 1)
		if n != 0 {
			t.Errorf("rate %g: %d sends allowed after the first", rate, n)
		}
		if !next.After(start.Add(time.Second)) {
			t.Errorf("rate %g: the second datagram is due at %v after the start", rate, next.Sub(start))
		}
	}
}
