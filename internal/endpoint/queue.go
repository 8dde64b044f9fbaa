package endpoint

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// RouterQueue is a router's egress device in the router's network
// namespace (a name under /run/netns), whose root qdisc a side samples.
type RouterQueue struct {
	Netns string
	Dev   string
}

// queueSampler samples one root qdisc every result.QueueSampleEvery, for
// where an RRUL run's delay built: the side's own toward the peer, or a
// routed lab's router's.
type queueSampler struct {
	mu  sync.Mutex
	rec result.QueueRecord
	max int
}

// startQueueSampler finds the device toward peer and samples its qdisc
// until ctx ends; wait returns once the sampler stopped. A device or
// qdisc it cannot read is recorded as the record's error.
func startQueueSampler(ctx context.Context, t spec.Test, peer netip.Addr, origin time.Time) (qs *queueSampler, wait func()) {
	qs = &queueSampler{max: result.MaxQueueSamples(t)}
	dev, q, err := sysinfo.Egress(peer)
	if err != nil {
		qs.rec.Error = err.Error()
		return qs, func() {}
	}
	qs.rec.Dev = dev
	if q != nil {
		qs.rec.Kind = q.Kind
		if q.Kind == "tbf" {
			qs.rec.RateBitsPerSecond, qs.rec.LimitBytes = float64(q.RateBitsPerSecond), q.LimitBytes
		}
	}
	return qs, qs.run(ctx, origin, func() (measure.QdiscStats, error) { return measure.ReadQdisc(dev) })
}

// startRouterSamplers samples the egress qdiscs of the routers given
// (a routed lab's, which lab run passes: Config.RouterQueues), the
// router's queues being on the path between the two sides. wait returns
// once every sampler stopped. A router qdisc it cannot open (not root,
// no such namespace or device) is a record with its error.
func startRouterSamplers(ctx context.Context, t spec.Test, routers []RouterQueue, origin time.Time) (samplers []*queueSampler, wait func()) {
	var waits []func()
	for _, e := range routers {
		qs := &queueSampler{max: result.MaxQueueSamples(t)}
		qs.rec.Dev, qs.rec.Netns = e.Dev, e.Netns
		samplers = append(samplers, qs)
		nq, err := measure.OpenNetnsQdisc(e.Netns, e.Dev)
		if err != nil {
			qs.rec.Error = err.Error()
			continue
		}
		qs.rec.Kind = nq.Kind
		if nq.Kind == "tbf" {
			qs.rec.RateBitsPerSecond, qs.rec.LimitBytes = float64(nq.RateBitsPerSecond), nq.LimitBytes
		}
		w := qs.run(ctx, origin, nq.Read)
		waits = append(waits, func() { w(); nq.Close() })
	}
	return samplers, func() {
		for _, w := range waits {
			w()
		}
	}
}

// run samples with read until ctx ends or a read fails, the ticks
// scheduled from one ticker so they do not drift; the returned function
// waits for it to stop.
func (qs *queueSampler) run(ctx context.Context, origin time.Time, read func() (measure.QdiscStats, error)) func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := time.Duration(result.QueueSampleEvery * float64(time.Second))
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			s, err := read()
			qs.mu.Lock()
			if err != nil {
				qs.rec.Error = err.Error()
			} else if len(qs.rec.Samples) < qs.max {
				qs.rec.Samples = append(qs.rec.Samples, result.QueueSample{T: time.Since(origin).Seconds(), QdiscStats: s})
			}
			qs.mu.Unlock()
			if err != nil {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
		}
	}()
	return func() { <-done }
}

// record returns what was sampled, with the load's times.
func (qs *queueSampler) record(loadStart, loadEnd float64) *result.QueueRecord {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	r := qs.rec
	r.Samples = append([]result.QueueSample(nil), qs.rec.Samples...)
	r.LoadStartS, r.LoadEndS = loadStart, loadEnd
	return &r
}
