package sysinfo

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/measure"
)

// baselineResidency is the idle baseline from each online CPU's cpuidle
// residency over window: two samples (sampleIdle), this process's own CPU
// time in between left out (measure.BaselineOfIdle). An error means it
// cannot be taken here (no cpuidle, a CPU this process may not run on)
// and the caller falls back to /proc/stat.
func baselineResidency(ctx context.Context, sysRoot string, window time.Duration) (*measure.CPUBaseline, error) {
	cpus, err := measure.ReadOnlineCPUs(sysRoot)
	if err != nil {
		return nil, err
	}
	a, err := sampleIdle(sysRoot, cpus)
	if err != nil {
		return nil, err
	}
	if err := sleepCtx(ctx, window); err != nil {
		return nil, err
	}
	b, err := sampleIdle(sysRoot, cpus)
	if err != nil {
		return nil, err
	}
	bl, err := measure.BaselineOfIdle(a, b)
	if err != nil {
		return nil, err
	}
	return &bl, nil
}

// sampleIdle reads every CPU's idle residency from that CPU: the calling
// goroutine's thread, locked for the while, moves onto each CPU in turn
// (sched_setaffinity), which ends any idle period in progress there, so
// the counter read includes it; then it gets its own affinity back. It
// costs a migration per CPU, some 0.1-0.3 ms on 2 CPUs. It fails when a
// CPU is outside the thread's affinity (a cpuset): that CPU cannot be
// woken, and its counter may leave out a long sleep.
func sampleIdle(sysRoot string, cpus []int) (measure.IdleSample, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil {
		return measure.IdleSample{}, fmt.Errorf("cpu affinity: %w", err)
	}
	for _, c := range cpus {
		if !mine.IsSet(c) {
			return measure.IdleSample{}, fmt.Errorf("cpu %d is outside this process's affinity", c)
		}
	}
	defer unix.SchedSetaffinity(0, &mine)
	visit := func(c int) error {
		var one unix.CPUSet
		one.Set(c)
		return unix.SchedSetaffinity(0, &one)
	}
	return measure.ReadIdle(sysRoot, cpus, visit)
}
