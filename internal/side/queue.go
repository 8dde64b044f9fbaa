package side

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

// queueSampler samples the root qdisc of the device toward the peer every
// result.QueueSampleEvery, for where an RRUL run's delay built.
type queueSampler struct {
	mu  sync.Mutex
	rec result.QueueRecord
	max int
}

// startQueueSampler finds the device toward peer and samples its qdisc
// until ctx ends; wait returns once the sampler stopped. A device or
// qdisc it cannot read is recorded as the record's error.
func startQueueSampler(ctx context.Context, t spec.Test, peer netip.Addr, origin time.Time) (*queueSampler, func()) {
	qs := &queueSampler{max: result.MaxQueueSamples(t)}
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
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := time.Duration(result.QueueSampleEvery * float64(time.Second))
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			s, err := measure.ReadQdisc(dev)
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
	return qs, func() { <-done }
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
