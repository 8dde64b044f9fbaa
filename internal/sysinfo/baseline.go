package sysinfo

import (
	"context"
	"time"

	"wirespeed/internal/measure"
)

// BaselineWindow is the length of the idle CPU baseline each side takes
// once per control session, before its first run, where it comes from
// /proc/stat: 20 ticks of each CPU at USER_HZ 100, enough to see a
// neighbour that keeps a CPU busy, short enough not to matter beside a run
// of seconds.
const BaselineWindow = 200 * time.Millisecond

// ResidencyBaselineWindow is the baseline's window where the kernel keeps
// each CPU's idle residency to the microsecond (cpuidle): the time idle in
// it is exact, not a count of 10 ms ticks, so a few milliseconds see a
// neighbour that keeps a CPU busy as surely as BaselineWindow of ticks
// does; a neighbour that runs in bursts longer than the window may fall
// outside it (bench/README.md, "The cost of a short test").
const ResidencyBaselineWindow = 5 * time.Millisecond

// TakeBaseline measures the host's idle CPU baseline: from each CPU's idle
// residency over ResidencyBaselineWindow where the kernel has cpuidle and
// this process may run on every online CPU (baselineResidency), otherwise
// from <procRoot>/stat over window. It returns when the window is over or
// ctx ends. A proc root other than the live one (a fixture, a host's
// procfs mounted elsewhere) is read for /proc/stat only: the residencies
// are this kernel's sysfs.
func TakeBaseline(ctx context.Context, procRoot string, window time.Duration) (*measure.CPUBaseline, error) {
	if procRoot == "" || procRoot == measure.DefaultProcRoot {
		if b, err := baselineResidency(ctx, measure.DefaultSysRoot, ResidencyBaselineWindow); err == nil || ctx.Err() != nil {
			return b, err
		}
	}
	if procRoot == "" {
		procRoot = measure.DefaultProcRoot
	}
	a, err := measure.ReadCPU(procRoot)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := sleepCtx(ctx, window); err != nil {
		return nil, err
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

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}
