package exporter

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// queues keeps probes of one target in line: a wirespeed server runs one
// test at a time, and a second probe would only be told it is busy, or
// worse, share the link with the first and halve both figures. Probes of
// different targets run side by side up to the global limit.
//
// What a client can make it hold is bounded whatever targets it names:
// at most maxWaiting probes wait over all targets (a target's own queue
// of size is within that), at most the global slots run, and a target is in
// the map only while a probe of it waits, runs, or has a test still
// ending past its probe's deadline (see turn.leave).
type queues struct {
	size       int // probes that may wait per target while one runs
	maxWaiting int // probes that may wait over all targets

	mu        sync.Mutex
	free      int       // global slots free, over all targets
	slotLine  []*waiter // probes holding their target's turn, waiting for a global slot
	seq       uint64
	targets   map[string]*targetQueue
	waiting   int // over all targets
	running   int
	abandoned int // tests still running after their probe answered
}

type targetQueue struct {
	slot    chan struct{} // holds a token while a probe of the target runs
	waiting int
	running bool
}

func newQueues(size, maxWaiting, concurrent int) *queues {
	return &queues{size: size, maxWaiting: maxWaiting, free: concurrent, targets: map[string]*targetQueue{}}
}

// waiter is a probe in line for a global slot. The slots go earliest
// deadline first: by the last moment each probe's test could still
// start, then in order of arrival. So a probe never waits behind one
// whose scrape ends later, and a client's probes with long timeouts hold
// no probe with a shorter one back.
type waiter struct {
	by      time.Time // the last moment its test could start; zero: none
	seq     uint64
	granted chan struct{} // closed when the slot is handed to it
}

func (w *waiter) before(o *waiter) bool {
	switch {
	case w.by.IsZero() != o.by.IsZero():
		return !w.by.IsZero()
	case !w.by.Equal(o.by):
		return w.by.Before(o.by)
	}
	return w.seq < o.seq
}

// handOn gives a free global slot to the first waiter, or counts it
// free; q.mu is held.
func (q *queues) handOn() {
	if len(q.slotLine) == 0 {
		q.free++
		return
	}
	first := 0
	for i, w := range q.slotLine {
		if w.before(q.slotLine[first]) {
			first = i
		}
	}
	w := q.slotLine[first]
	q.slotLine = slices.Delete(q.slotLine, first, first+1)
	close(w.granted)
}

// takeGlobal waits for a global slot until ctx ends; it reports whether
// it got one.
func (q *queues) takeGlobal(ctx context.Context) bool {
	q.mu.Lock()
	if q.free > 0 && len(q.slotLine) == 0 {
		q.free--
		q.mu.Unlock()
		return true
	}
	by, _ := ctx.Deadline()
	q.seq++
	w := &waiter{by: by, seq: q.seq, granted: make(chan struct{})}
	q.slotLine = append(q.slotLine, w)
	q.mu.Unlock()
	select {
	case <-w.granted:
		return true
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.Index(q.slotLine, w); i >= 0 {
		q.slotLine = slices.Delete(q.slotLine, i, i+1)
		return false
	}
	// Handed the slot as ctx ended: hand it on.
	q.handOn()
	return false
}

// errQueueFull is acquire's answer when the target's queue, or the line
// over all targets, is full.
type errQueueFull struct {
	waiting int  // of the target, or over all targets when all is set
	all     bool // the line over all targets is full
}

func (e errQueueFull) Error() string { return "" }

// turn is a probe's place: its target's turn and a global slot.
type turn struct {
	q      *queues
	target string
	t      *targetQueue
	global bool // still holds its global slot
}

// acquire waits for target's turn and for a global slot. It returns
// errQueueFull at once when size probes of target, or maxWaiting over all
// targets, already wait, and ctx's error when ctx ends first. One of
// turn's release or leave must be called after a nil error.
func (q *queues) acquire(ctx context.Context, target string) (*turn, error) {
	q.mu.Lock()
	if q.waiting >= q.maxWaiting {
		n := q.waiting
		q.mu.Unlock()
		return nil, errQueueFull{waiting: n, all: true}
	}
	t := q.targets[target]
	if t == nil {
		t = &targetQueue{slot: make(chan struct{}, 1)}
		q.targets[target] = t
	}
	inLine := t.waiting // a probe holding the target's turn while it waits for a global slot counts here
	if t.running {
		inLine++
	}
	if inLine > q.size {
		n := t.waiting
		q.mu.Unlock()
		return nil, errQueueFull{waiting: n}
	}
	t.waiting++
	q.waiting++
	q.mu.Unlock()

	got := 0 // 1: the target's slot, 2: the global one too
	select {
	case t.slot <- struct{}{}:
		got = 1
		if q.takeGlobal(ctx) {
			got = 2
		}
	case <-ctx.Done():
	}

	q.mu.Lock()
	defer q.mu.Unlock()
	t.waiting--
	q.waiting--
	if got < 2 {
		if got == 1 {
			<-t.slot
		}
		q.forget(target, t)
		return nil, ctx.Err()
	}
	t.running = true
	q.running++
	return &turn{q: q, target: target, t: t, global: true}, nil
}

// release gives back the global slot, if the probe still holds it, and
// the target's turn.
func (tr *turn) release() {
	q := tr.q
	q.mu.Lock()
	defer q.mu.Unlock()
	tr.dropGlobal()
	tr.t.running = false
	<-tr.t.slot
	q.forget(tr.target, tr.t)
}

// leave is a probe's answer while its test still runs (past the probe's
// deadline): the global slot goes back now, so that a test that outlasts
// its probe holds no other target's probe back; the target's turn stays
// with the test until it ends, since the target's server is still busy
// with it. finish is called then.
func (tr *turn) leave() (finish func()) {
	q := tr.q
	q.mu.Lock()
	tr.dropGlobal()
	q.abandoned++
	q.mu.Unlock()
	return func() {
		q.mu.Lock()
		q.abandoned--
		q.mu.Unlock()
		tr.release()
	}
}

// dropGlobal gives back the global slot once; q.mu is held.
func (tr *turn) dropGlobal() {
	if tr.global {
		tr.global = false
		tr.q.running--
		tr.q.handOn()
	}
}

// forget drops an idle target's queue; q.mu is held. A probe that took t
// from the map counted itself in t.waiting under q.mu, so an idle t has
// no one holding it.
func (q *queues) forget(target string, t *targetQueue) {
	if t.waiting == 0 && !t.running {
		delete(q.targets, target)
	}
}

var (
	queueWaitingDesc = prometheus.NewDesc("wirespeed_exporter_probes_waiting",
		"Probes waiting for their target's turn or for a global slot, over all targets (at most --max-waiting).", nil, nil)
	queueRunningDesc = prometheus.NewDesc("wirespeed_exporter_probes_running",
		"Probes running a test.", nil, nil)
	queueTargetsDesc = prometheus.NewDesc("wirespeed_exporter_targets_busy",
		"Targets with a probe waiting or running, or a test still ending past its probe's deadline.", nil, nil)
	queueAbandonedDesc = prometheus.NewDesc("wirespeed_exporter_tests_past_deadline",
		"Tests still running after their probe answered at its deadline (probe_success 0): they hold their target's turn, not a global slot.", nil, nil)
)

// Describe and Collect make the queues a collector of the exporter's own
// metrics: the queue lengths as they are at the scrape. No series has a
// target label: a target is what a client sends, and a client must not
// grow the exporter's series.
func (q *queues) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueWaitingDesc
	ch <- queueRunningDesc
	ch <- queueTargetsDesc
	ch <- queueAbandonedDesc
}

func (q *queues) Collect(ch chan<- prometheus.Metric) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(queueWaitingDesc, prometheus.GaugeValue, float64(q.waiting))
	ch <- prometheus.MustNewConstMetric(queueRunningDesc, prometheus.GaugeValue, float64(q.running))
	ch <- prometheus.MustNewConstMetric(queueTargetsDesc, prometheus.GaugeValue, float64(len(q.targets)))
	ch <- prometheus.MustNewConstMetric(queueAbandonedDesc, prometheus.GaugeValue, float64(q.abandoned))
}
