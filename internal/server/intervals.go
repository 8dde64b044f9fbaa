package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// Interval reports and what they cost. A test's interval
// records are the client's to multiply: -P 32 -i 0.01 in both directions
// is 6,600 records a second, and kept for the whole test (as the result
// used to carry them) they grew a server by 5.3 MB a test-second and made
// results over the frame limit that were never sent. So:
//
//   - a client that keeps the reports as they arrive says so
//     (control.TestRequest.StreamedIntervals); the server then keeps none
//     and queues at most reportQueue of them for the control connection;
//   - what a test keeps or queues is counted in the memory budgets
//     (intervalMemory), and a client that does not stream is refused a
//     test whose result would not fit the frame limit;
//   - the reports are written by a goroutine of their own, never by the
//     sampler, and a client that stops reading them ends its test: a full
//     queue, or a write that waits past its deadline, cancels the run.

// intervalRecord is what one interval record of one stream (or a flow's
// sum) costs the server while kept or queued: a result.Interval is 96
// bytes, a result.StreamInterval 104; twice that for the slices' growth.
// TestIntervalRecordCoversTheStructs checks it against the types.
const intervalRecord = 256

// intervalJSON bounds one record's JSON in a result: twelve fields whose
// names and numbers take 130 to 290 bytes.
const intervalJSON = 300

// reportBacklog is how much of the reports a client may fall behind
// before its test ends, in time: its reports of five seconds, and at
// least minReportQueue of them. Two seconds ended legitimate -P 32
// -i 0.01 runs on a machine with a load of 40.
const (
	reportBacklog  = 5 * time.Second
	minReportQueue = 16
)

// reportsGrace is how long after the window's planned end the client
// has to take the last of its reports: a control write's own timeout.
// With the drain and the result after it, the test ends well within its
// length plus testGrace.
const reportsGrace = 10 * time.Second

// intervalsPerFlow is the number of interval reports a flow of t makes.
func intervalsPerFlow(t spec.Test) int64 {
	if t.Interval <= 0 {
		return 0
	}
	return int64((t.Duration + t.Interval - 1) / t.Interval)
}

// reportQueue is how many reports of one direction the server queues at
// most for a client that streams them.
func reportQueue(t spec.Test) int64 {
	n := intervalsPerFlow(t)
	if n == 0 {
		return 0
	}
	return min(n, max(minReportQueue, int64(reportBacklog/t.Interval)))
}

// intervalRecords is the number of interval records t makes this server
// hold at most: every record of the window when it keeps them, or those
// of a full queue when the client streams them; in each direction one per
// stream and one for the flow's sum.
func intervalRecords(t spec.Test, streamed bool) int64 {
	per := intervalsPerFlow(t)
	if streamed {
		per = reportQueue(t)
	}
	return per * int64(t.Parallel+1) * int64(len(t.Directions()))
}

// intervalMemory is what t's interval records cost this server.
func intervalMemory(t spec.Test, streamed bool) int64 {
	return intervalRecords(t, streamed) * intervalRecord
}

// intervalLimit says why t's interval records do not fit a result frame
// of maxFrame bytes when the client does not stream them, or returns "".
func intervalLimit(t spec.Test, streamed bool, maxFrame int) string {
	if streamed {
		return ""
	}
	size := intervalRecords(t, false) * intervalJSON
	if size <= int64(maxFrame) {
		return ""
	}
	return fmt.Sprintf("a result of %d interval records (-i %v over %v, %d streams per direction and their sum) would take about %s, over the control message limit of %s; ask for a longer interval (-i) or fewer streams (-P), or use a newer wirespeed client, which takes intervals as they come",
		intervalRecords(t, false), t.Interval, t.Duration, t.Parallel, units.FormatBytes(float64(size)), units.FormatBytes(float64(maxFrame)))
}

// reportWriter sends a test's interval reports on the control connection
// from a goroutine of its own, in order, so that the sampler never waits
// for the client. A client that does not read them ends its test: when
// more than max reports wait, or a write does not finish by the test's
// deadline, the writer cancels the run and keeps the reason.
type reportWriter struct {
	cc       *control.Conn
	deadline time.Time
	cancel   context.CancelFunc
	max      int

	mu      sync.Mutex
	queue   []result.IntervalReport
	err     error
	closed  bool
	wake    chan struct{}
	stopped chan struct{}
}

func newReportWriter(cc *control.Conn, t spec.Test, deadline time.Time, cancel context.CancelFunc) *reportWriter {
	w := &reportWriter{cc: cc, deadline: deadline, cancel: cancel, max: int(max(reportQueue(t), 1)) * len(t.Directions()),
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go w.run()
	return w
}

// add queues r; it never blocks. It is endpoint.Config.OnInterval.
func (w *reportWriter) add(r result.IntervalReport) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.closed {
		return
	}
	if len(w.queue) >= w.max {
		w.fail(fmt.Errorf("the client stopped reading its control connection: %d interval reports were waiting", len(w.queue)))
		return
	}
	w.queue = append(w.queue, r)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// fail records the first error and cancels the run; w.mu is held. It
// also ends a write that waits on the client now: the session ends with
// the test, and close must not wait out the write's deadline.
func (w *reportWriter) fail(err error) {
	if w.err == nil {
		w.err = err
		w.queue = nil
		w.cancel()
		w.cc.NetConn().SetWriteDeadline(time.Unix(1, 0))
	}
}

func (w *reportWriter) run() {
	defer close(w.stopped)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closed && w.err == nil {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		if w.err != nil || len(w.queue) == 0 {
			w.mu.Unlock()
			return
		}
		r := w.queue[0]
		w.queue[0] = result.IntervalReport{}
		w.queue = w.queue[1:]
		w.mu.Unlock()
		if err := w.cc.SendBy(w.deadline, control.TypeInterval, r); err != nil {
			w.mu.Lock()
			w.fail(fmt.Errorf("the client stopped reading its control connection: %w", err))
			w.mu.Unlock()
			return
		}
	}
}

// close waits until every queued report is written (or the writer
// failed) and returns why it failed, if it did. Call it when the run has
// ended: no report is added after.
func (w *reportWriter) close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.stopped
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
