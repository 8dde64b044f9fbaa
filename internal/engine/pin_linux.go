//go:build !wirespeed_portable

package engine

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func pin(cpu int) (Pinning, func(), error) {
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

func checkCPU(cpu int) error {
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
