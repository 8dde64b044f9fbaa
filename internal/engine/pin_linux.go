package engine

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Pin locks the calling goroutine to its OS thread and binds the thread to
// cpu (sched_setaffinity), as netperf's -T does for its data-path
// process: a loop run by the goroutine afterwards runs on that CPU only,
// also while it waits in the kernel. It reads the affinity back and fails
// when it is not exactly cpu. The returned function restores the thread's
// former affinity and unlocks it; call it from the same goroutine when the
// loop is done. If the affinity cannot be restored the thread stays
// locked, so that it ends with the goroutine instead of serving others.
func Pin(cpu int) (Pinning, func(), error) {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return Pinning{}, nil, fmt.Errorf("read the thread's CPU affinity: %w", err)
	}
	if cpu < 0 || cpu >= len(old)*64 || !old.IsSet(cpu) {
		runtime.UnlockOSThread()
		return Pinning{}, nil, fmt.Errorf("pin to CPU %d: this process may run on CPUs %s only", cpu, cpuSetString(&old))
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return Pinning{}, nil, fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	undo := func() {
		if unix.SchedSetaffinity(0, &old) == nil {
			runtime.UnlockOSThread()
		}
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(0, &got); err != nil || got != set {
		undo()
		return Pinning{}, nil, fmt.Errorf("pin to CPU %d: the kernel reports the thread's CPUs as %s", cpu, cpuSetString(&got))
	}
	return Pinning{CPU: cpu, TID: unix.Gettid()}, undo, nil
}

// CheckCPU reports whether this process may run on cpu, so that a run can
// refuse a -T list before any loop starts.
func CheckCPU(cpu int) error {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(0, &s); err != nil {
		return fmt.Errorf("read the CPU affinity: %w", err)
	}
	if cpu < 0 || cpu >= len(s)*64 || !s.IsSet(cpu) {
		return fmt.Errorf("CPU %d: this process may run on CPUs %s only", cpu, cpuSetString(&s))
	}
	return nil
}

// cpuSetString lists a CPU set's members, "0,1,4".
func cpuSetString(s *unix.CPUSet) string {
	var b strings.Builder
	for c := 0; c < len(s)*64; c++ {
		if s.IsSet(c) {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(c))
		}
	}
	if b.Len() == 0 {
		return "(none)"
	}
	return b.String()
}
