package engine

import (
	"math"
	"testing"
	"time"
)

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
