package endpoint

import (
	"context"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/spec"
)

// TestQueueSamplerRecordsTBF: an RRUL side whose device toward the peer
// has a tbf records the tbf's rate and queue limit, which the queue's
// delay is computed at (result.AttributeQueue). The lab's veth ends have
// a 1 Mbit/s tbf; its queue, by lab.TBF's rule, is the bucket of
// max(125000/250, 2 × (1500 + 64)) = 3128 bytes plus 5 ms at 125,000
// bytes a second, 625: 3753 bytes. Only the settings are read, once, when
// the sampler starts: no traffic and no clock, so a busy host does not
// change the answer.
func TestQueueSamplerRecordsTBF(t *testing.T) {
	l := nstest.NewLab(t, lab.Config{RateBitsPerSecond: 1_000_000})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one sample, then stop
	var qs *queueSampler
	var wait func()
	if err := l.Do(lab.B, func() error {
		qs, wait = startQueueSampler(ctx, spec.Default(), l.A.IPv4, time.Now())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wait()
	rec := qs.record(0, 0)
	if rec.Dev != l.B.Dev || rec.Kind != "tbf" {
		t.Fatalf("sampled %q's %q qdisc (error %q), want %s's tbf", rec.Dev, rec.Kind, rec.Error, l.B.Dev)
	}
	if rec.RateBitsPerSecond != 1_000_000 || rec.LimitBytes != 3753 {
		t.Errorf("tbf recorded at %v bit/s with a queue of %d bytes, want 1000000 and 3753", rec.RateBitsPerSecond, rec.LimitBytes)
	}
}
