package sysinfo

import (
	"context"
	"time"

	"wirespeed/internal/measure"
)

// BaselineWindow is the length of the idle CPU baseline each side takes
// once per control session, before its first run: 20 ticks of each CPU at
// USER_HZ 100, enough to see a neighbour that keeps a CPU busy, short
// enough not to matter beside a run of seconds.
const BaselineWindow = 200 * time.Millisecond

// TakeBaseline samples <procRoot>/stat, waits window (or until ctx ends),
// samples again and returns the utilization between the two samples.
func TakeBaseline(ctx context.Context, procRoot string, window time.Duration) (*measure.CPUBaseline, error) {
	if procRoot == "" {
		procRoot = measure.DefaultProcRoot
	}
	a, err := measure.ReadCPU(procRoot)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	tm := time.NewTimer(window)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-tm.C:
	}
	b, err := measure.ReadCPU(procRoot)
	if err != nil {
		return nil, err
	}
	bl, err := measure.BaselineOf(a, b, time.Since(start).Seconds())
	if err != nil {
		return nil, err
	}
	return &bl, nil
}
