package testkit

import (
	"runtime"
	"testing"
	"time"
)

// CountAllocs counts the heap allocations of a workload that runs in
// goroutines, such as the engine's send and receive loops: after a
// garbage collection it calls start, waits until progress (a count of
// the work done, such as system calls) reaches at least min and at least
// minTime has passed, calls stop, which must return once the workload's
// goroutines have ended, and returns the allocations the whole process
// made in between and the final progress. If progress does not reach min
// within LoadWait, it stops the workload and fails t: the bound a test
// sets per unit of work means little over too few units, and waiting
// instead of skipping keeps the test meaningful on a loaded machine.
func CountAllocs(t testing.TB, min int64, minTime time.Duration, start func(), progress func() int64, stop func()) (allocs uint64, n int64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start()
	began := time.Now()
	reached := WaitFor(LoadWait, func() bool { return progress() >= min && time.Since(began) >= minTime })
	stop()
	runtime.ReadMemStats(&after)
	n = progress()
	if !reached {
		t.Fatalf("only %d units of work in %v, want %d before counting allocations", n, LoadWait, min)
	}
	return after.Mallocs - before.Mallocs, n
}

// LoopSetupAllocs is what starting and stopping a pair of engine loops
// may allocate in the process whatever the messages they move: their
// goroutines and set-up, the OS thread each copying loop runs on (its
// own, engine.ownFiles) and the ones the runtime starts meanwhile. A
// test allows it on top of one allocation per hundred messages, which
// one allocation per message would exceed a hundredfold.
const LoopSetupAllocs = 100

// LoadWait bounds how long CountAllocs waits for enough work.
const LoadWait = 30 * time.Second
