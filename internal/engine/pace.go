package engine

import (
	"math"
	"sync/atomic"
	"time"
)

// pacer holds a loop's sending to a rate: each send of n bytes moves its
// due time on by n bytes' worth; when the due time runs more than
// paceSlack ahead of the clock, the loop sleeps until it is within it.
// Credit for time spent idle is capped at paceSlack too, so what leaves
// over any window of a few milliseconds stays near the rate. It reads the
// clock once per send, so it is only set up when a rate is asked for.
type pacer struct {
	nsPerByte float64
	due       time.Time
	// credit caps the time the schedule may fall behind the clock and
	// catch up on: paceSlack, or longer for a TCP sender (newStreamPacer).
	credit time.Duration
	waited atomic.Bool // a send was delayed
}

const paceSlack = time.Millisecond

// maxPaceStep bounds one step of a schedule: longer than any test (the
// spec allows a day), short enough that adding it to a time, even many
// times over, never overflows.
const maxPaceStep = 1000 * time.Hour

// paceStep is f nanoseconds as a Duration, saturating at maxPaceStep: at
// a tiny rate (1e-300 bits/s is 8e309 ns a byte, +Inf as a float64) a
// plain conversion overflows, puts the schedule in the past and makes the
// loop send without ever sleeping.
func paceStep(f float64) time.Duration {
	switch {
	case f != f || f <= 0: // NaN or none
		return 0
	case f >= float64(maxPaceStep):
		return maxPaceStep
	}
	return time.Duration(f)
}

// newPacer returns a pacer for bitsPerSecond, or nil for no pacing (0,
// negative or +Inf).
func newPacer(bitsPerSecond float64) *pacer {
	if !(bitsPerSecond > 0) || math.IsInf(bitsPerSecond, 1) {
		return nil
	}
	return &pacer{nsPerByte: 8e9 / bitsPerSecond, credit: paceSlack}
}

// streamCredit is how far a TCP sender's pacer may fall behind and catch
// up (newStreamPacer).
const streamCredit = 100 * time.Millisecond

// newStreamPacer is a TCP sender's pacer for writes of size bytes: it may
// catch up on streamCredit, or one write's time and paceSlack when that is
// longer, so that a sleep that overran (a busy CPU, the wake-up of a locked
// thread) or a write that blocked on a full socket buffer is made up by
// the next writes instead of lost: the average holds the rate, as iperf3's
// -b does by comparing the bytes sent with the time elapsed, yet a stall
// longer than that is not paid back with a burst of its whole length.
func newStreamPacer(bitsPerSecond float64, size int) *pacer {
	p := newPacer(bitsPerSecond)
	if p != nil {
		p.credit = max(streamCredit, p.credit+paceStep(float64(size)*p.nsPerByte))
	}
	return p
}

// wait blocks until n more bytes may leave, or until stopped reports true;
// it sleeps in slices of at most 10 ms so a Stop is seen.
func (p *pacer) wait(n int, stopped func() bool) {
	now := time.Now()
	if p.due.IsZero() {
		// No credit at the start (no burst) but the first send's.
		p.due = now.Add(-paceStep(float64(n) * p.nsPerByte))
	}
	if p.due.Before(now.Add(-p.credit)) {
		p.due = now.Add(-p.credit)
	}
	p.due = p.due.Add(paceStep(float64(n) * p.nsPerByte))
	for d := p.due.Sub(now); d > paceSlack && !stopped(); d = time.Until(p.due) {
		p.waited.Store(true)
		time.Sleep(min(d, 10*time.Millisecond))
	}
}

// SetMaxRate paces the server's responses of a UDP request/response test
// to at most bitsPerSecond of payload (0 or +Inf: no pacing), so that a
// client cannot make the server send more than that whatever its request
// sizes, burst and rate. Call it before Run. A TCP loop is not paced: TCP's
// congestion control paces it. Paced reports whether a response waited.
func (r *RRServer) SetMaxRate(bitsPerSecond float64) {
	if r.udp {
		r.pace = newPacer(bitsPerSecond)
	}
}

// SetMaxRate paces the client's requests of a UDP request/response test
// to at most bitsPerSecond of payload (0 or +Inf: no pacing): a relaying
// server's --max-udp-rate holds for the requests it sends, whatever the
// request size and burst. Call it before Run; TCP is not paced.
func (r *RRClient) SetMaxRate(bitsPerSecond float64) {
	if r.udp {
		r.pace = newPacer(bitsPerSecond)
	}
}

// PacedRequests reports whether the pacing of SetMaxRate delayed a request.
func (r *RRClient) PacedRequests() bool { return r.pace != nil && r.pace.waited.Load() }

// Paced reports whether the pacing of SetMaxRate delayed a response.
func (r *RRServer) Paced() bool { return r.pace != nil && r.pace.waited.Load() }
