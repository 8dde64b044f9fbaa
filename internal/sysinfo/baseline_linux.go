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

// sampleIdle reads every CPU's idle residency (measure.ReadIdle) after
// waking each CPU (wakeCPUs).
func sampleIdle(sysRoot string, cpus []int) (measure.IdleSample, error) {
	return measure.ReadIdle(sysRoot, cpus, wakeCPUs)
}

// wakeCPUs moves the calling goroutine's thread, locked for the while,
// onto each CPU in turn (sched_setaffinity), which ends any idle period in
// progress there so that the CPU's residency counter includes it, and
// returns when it ran on each; then it gives the thread its own affinity
// back. It costs a migration per CPU, some 0.1-0.3 ms on 2 CPUs. Between
// the moves it makes no call but sched_setaffinity, which x/sys makes
// raw: the thread never enters the scheduler while it is held to one CPU,
// so no thread the runtime starts from it inherits that CPU alone (a new
// thread takes its creator's affinity). It fails when a CPU is outside
// the thread's affinity (a cpuset): that CPU cannot be woken, and its
// counter may leave out a long sleep.
func wakeCPUs(cpus []int) ([]time.Time, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil {
		return nil, fmt.Errorf("cpu affinity: %w", err)
	}
	for _, c := range cpus {
		if !mine.IsSet(c) {
			return nil, fmt.Errorf("cpu %d is outside this process's affinity", c)
		}
	}
	at := make([]time.Time, len(cpus))
	var err error
	for i, c := range cpus {
		var one unix.CPUSet
		one.Set(c)
		if err = unix.SchedSetaffinity(0, &one); err != nil {
			err = fmt.Errorf("cpu %d: %w", c, err)
			break
		}
		at[i] = time.Now()
	}
	if rerr := unix.SchedSetaffinity(0, &mine); rerr != nil {
		// The thread keeps a CPU of its own: let it end with this
		// goroutine rather than go back to the runtime's pool.
		runtime.LockOSThread()
		return nil, fmt.Errorf("cpu affinity back: %w", rerr)
	}
	return at, err
}
