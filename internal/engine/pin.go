package engine

// Pinning is what Pin did: the CPU the calling goroutine's OS thread is
// now bound to, and the thread's id.
type Pinning struct {
	CPU int
	TID int
}

// Pin locks the calling goroutine to its OS thread and binds the thread to
// cpu (sched_setaffinity), as netperf's -T does for its data-path
// process: a loop run by the goroutine afterwards runs on that CPU only,
// also while it waits in the kernel. It reads the affinity back and fails
// when it is not exactly cpu. The returned function restores the thread's
// former affinity and unlocks it; call it from the same goroutine when the
// loop is done. If the affinity cannot be restored the thread stays
// locked, so that it ends with the goroutine instead of serving others.
// Linux only.
func Pin(cpu int) (Pinning, func(), error) { return pin(cpu) }

// CheckCPU reports whether this process may run on cpu, so that a run can
// refuse a -T list before any loop starts. Linux only.
func CheckCPU(cpu int) error { return checkCPU(cpu) }
