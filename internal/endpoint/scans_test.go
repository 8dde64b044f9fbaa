package endpoint

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
// roots, processes and kinds never share.
func TestScanCacheShares(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	release := make(chan struct{})
	c := scanCache{read: func(k scanKey) (measure.Tasks, error) {
		calls.Add(1)
		<-release
		if fail.Load() {
			return nil, errors.New("planted")
		}
		return measure.Tasks{k.pid: {ID: k.pid}}, nil
	}}
	threads := scanKey{"/proc", 7}

	// 16 windows ending at once: one scan, and all of them get it.
	var wg sync.WaitGroup
	at := make([]time.Time, 16)
	for i := range at {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if _, at[i], err = c.take(threads, time.Second); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let them all find the scan under way
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("16 windows at once made %d scans, want 1", n)
	}
	for i := range at {
		if at[i] != at[0] {
			t.Errorf("window %d got the scan of %v, want the one of %v", i, at[i], at[0])
		}
	}

	// Within the reuse bound: the same scan; past it, a new one.
	if _, got, _ := c.take(threads, time.Hour); got != at[0] || calls.Load() != 1 {
		t.Errorf("a fresh scan was not reused (%d scans)", calls.Load())
	}
	time.Sleep(5 * time.Millisecond)
	if _, got, _ := c.take(threads, time.Millisecond); !got.After(at[0]) || calls.Load() != 2 {
		t.Errorf("a scan older than the bound was reused (%d scans)", calls.Load())
	}
	// Another proc root (a lab's, a fixture's), process, or every process:
	// a scan of its own.
	c.take(scanKey{"/other", 7}, time.Hour)
	c.take(scanKey{"/proc", 8}, time.Hour)
	if tasks, _, _ := c.take(scanKey{procRoot: "/proc"}, time.Hour); len(tasks) != 1 || tasks[0].ID != 0 {
		t.Errorf("every process's scan got %v", tasks)
	}
	if n := calls.Load(); n != 5 {
		t.Errorf("%d scans after three other keys, want 5", n)
	}

	// A failed scan is handed to its caller and not kept.
	fail.Store(true)
	if _, _, err := c.take(scanKey{"/fail", 1}, time.Hour); err == nil {
		t.Errorf("failed scan not reported")
	}
	fail.Store(false)
	if _, _, err := c.take(scanKey{"/fail", 1}, time.Hour); err != nil || calls.Load() != 7 {
		t.Errorf("a failed scan was kept: %v (%d scans)", err, calls.Load())
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
