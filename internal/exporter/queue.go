package exporter

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// queues keeps probes of one target in line: a wirespeed server runs one
// test at a time, and a second probe would only be told it is busy, or
// worse, share the link with the first and halve both figures. Probes of
// different targets run side by side up to the global limit.
type queues struct {
	size   int           // probes that may wait per target while one runs
	global chan struct{} // a slot for each probe running, over all targets

	mu      sync.Mutex
	targets map[string]*targetQueue
	waiting int // over all targets
	running int
}

type targetQueue struct {
	slot    chan struct{} // holds a token while a probe of the target runs
	waiting int
	running bool
}

func newQueues(size, concurrent int) *queues {
	return &queues{size: size, global: make(chan struct{}, concurrent), targets: map[string]*targetQueue{}}
}

// errQueueFull is acquire's answer when the target's queue is full.
type errQueueFull struct{ waiting int }

func (e errQueueFull) Error() string { return "" }

// acquire waits for target's turn and for a global slot. It returns
// errQueueFull at once when size probes of target already wait, and
// ctx's error when ctx ends first. release must be called once after a
// nil error.
func (q *queues) acquire(ctx context.Context, target string) (release func(), err error) {
	q.mu.Lock()
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
		return nil, errQueueFull{n}
	}
	t.waiting++
	q.waiting++
	q.mu.Unlock()

	got := 0 // 1: the target's slot, 2: the global one too
	select {
	case t.slot <- struct{}{}:
		got = 1
		select {
		case q.global <- struct{}{}:
			got = 2
		case <-ctx.Done():
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
	return func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		t.running = false
		q.running--
		<-q.global
		<-t.slot
		q.forget(target, t)
	}, nil
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
		"Probes waiting for their target's turn or for a global slot.", nil, nil)
	queueRunningDesc = prometheus.NewDesc("wirespeed_exporter_probes_running",
		"Probes running a test.", nil, nil)
	queueTargetDesc = prometheus.NewDesc("wirespeed_exporter_target_queue_length",
		"Probes of a target waiting while another of the same target runs, for each target with a probe now.", []string{"target"}, nil)
)

// Describe and Collect make the queues a collector of the exporter's own
// metrics: the queue lengths as they are at the scrape.
func (q *queues) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueWaitingDesc
	ch <- queueRunningDesc
	ch <- queueTargetDesc
}

func (q *queues) Collect(ch chan<- prometheus.Metric) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(queueWaitingDesc, prometheus.GaugeValue, float64(q.waiting))
	ch <- prometheus.MustNewConstMetric(queueRunningDesc, prometheus.GaugeValue, float64(q.running))
	for name, t := range q.targets {
		ch <- prometheus.MustNewConstMetric(queueTargetDesc, prometheus.GaugeValue, float64(t.waiting), name)
	}
}
