package side

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wirespeed/internal/measure"
)

// TestScanCacheShares holds the sharing of the task scans between runs:
// windows that end together make one scan, a scan older than the reuse
// bound is not handed out, a failed scan is not kept, and different proc
// roots never share.
func TestScanCacheShares(t *testing.T) {
	var calls atomic.Int32
	fail := atomic.Bool{}
	release := make(chan struct{})
	c := scanCache{read: func(root string, pid int) taskSample {
		calls.Add(1)
		<-release
		if fail.Load() {
			return taskSample{at: time.Now(), err: errors.New("planted")}
		}
		return taskSample{at: time.Now(), threads: measure.Tasks{pid: {ID: pid}}, procs: measure.Tasks{}}
	}}

	// 16 windows ending at once: one scan, and all of them get it.
	var wg sync.WaitGroup
	got := make([]taskSample, 16)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = c.take("/proc", 7, time.Second) }()
	}
	time.Sleep(50 * time.Millisecond) // let them all find the scan under way
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("16 windows at once made %d scans, want 1", n)
	}
	for i, ts := range got {
		if ts.err != nil || ts.at != got[0].at {
			t.Errorf("window %d got %+v, want the one scan", i, ts)
		}
	}

	// Within the reuse bound: the same scan; past it, a new one.
	if ts := c.take("/proc", 7, time.Hour); ts.at != got[0].at || calls.Load() != 1 {
		t.Errorf("a fresh scan was not reused (%d scans)", calls.Load())
	}
	time.Sleep(5 * time.Millisecond)
	if ts := c.take("/proc", 7, time.Millisecond); !ts.at.After(got[0].at) || calls.Load() != 2 {
		t.Errorf("a scan older than the bound was reused (%d scans)", calls.Load())
	}
	// Another proc root (a lab's, a fixture's) or process: its own scan.
	c.take("/other", 7, time.Hour)
	c.take("/proc", 8, time.Hour)
	if n := calls.Load(); n != 4 {
		t.Errorf("%d scans after two other keys, want 4", n)
	}

	// A failed scan is handed to its caller and not kept.
	fail.Store(true)
	if ts := c.take("/fail", 1, time.Hour); ts.err == nil {
		t.Errorf("failed scan not reported")
	}
	fail.Store(false)
	if ts := c.take("/fail", 1, time.Hour); ts.err != nil || calls.Load() != 6 {
		t.Errorf("a failed scan was kept: %v (%d scans)", ts.err, calls.Load())
	}
}

// TestScanReuse holds the bound: a fiftieth of the window, at most 200 ms.
func TestScanReuse(t *testing.T) {
	for _, c := range []struct{ d, want time.Duration }{
		{time.Second, 20 * time.Millisecond},
		{5 * time.Second, 100 * time.Millisecond},
		{10 * time.Second, 200 * time.Millisecond},
		{time.Hour, 200 * time.Millisecond},
		{0, 0},
	} {
		if got := scanReuse(c.d); got != c.want {
			t.Errorf("scanReuse(%v) = %v, want %v", c.d, got, c.want)
		}
	}
}
