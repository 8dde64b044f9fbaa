package measure

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBaselineOf holds the idle baseline to the fixture's ticks worked out
// by hand: between before/stat and after/stat the "cpu" line counted 6
// user, 2 system, 1 irq, 1 softirq and 30 idle ticks, so 10 of 40 were
// busy: 25%.
func TestBaselineOf(t *testing.T) {
	a, err := ReadCPU("testdata/baseline/before")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadCPU("testdata/baseline/after")
	if err != nil {
		t.Fatal(err)
	}
	got, err := BaselineOf(a, b, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.UtilPct-25) > 1e-9 || got.WindowS != 0.2 {
		t.Errorf("baseline = %+v, want 25%% over 0.2s", got)
	}
	if _, err := BaselineOf(a, a, 0.2); err == nil {
		t.Error("a window without ticks gave a baseline, want an error")
	}
}

// TestReadIdle reads the fixtures' residencies, summed over each CPU's
// states, visiting each CPU before reading it: idle-a has cpu0 at 100 +
// 1000000 us and cpu1 at 0 + 2000000 us.
func TestReadIdle(t *testing.T) {
	cpus, err := ReadOnlineCPUs("testdata/idle-a")
	if err != nil || len(cpus) != 2 || cpus[0] != 0 || cpus[1] != 1 {
		t.Fatalf("online cpus %v, %v; want [0 1]", cpus, err)
	}
	var woken []int
	t0 := time.Unix(1000, 0)
	s, err := ReadIdle("testdata/idle-a", cpus, func(cs []int) ([]time.Time, error) {
		woken = append(woken, cs...)
		return []time.Time{t0, t0.Add(time.Millisecond)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(woken) != 2 || woken[0] != 0 || woken[1] != 1 {
		t.Errorf("woke %v before reading, want [0 1]", woken)
	}
	if !s.CPUs[0].At.Equal(t0) || !s.CPUs[1].At.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("readings timed %v and %v, want the wake times %v and 1 ms later", s.CPUs[0].At, s.CPUs[1].At, t0)
	}
	if _, err := ReadIdle("testdata/idle-a", cpus, func([]int) ([]time.Time, error) { return nil, nil }); err == nil {
		t.Error("a wake that timed no cpu gave a sample, want an error")
	}
	want := []time.Duration{1000100 * time.Microsecond, 2000000 * time.Microsecond}
	for i, c := range s.CPUs {
		if c.CPU != i || c.Idle != want[i] {
			t.Errorf("cpu %d: %+v, want idle %v", i, c, want[i])
		}
	}
	if _, err := ReadIdle("testdata/baseline/before", []int{0}, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a tree without cpuidle: %v, want fs.ErrNotExist", err)
	}
	for _, list := range []string{"", "3-1", "x"} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "devices/system/cpu"), 0o755)
		os.WriteFile(filepath.Join(dir, "devices/system/cpu/online"), []byte(list+"\n"), 0o644)
		if got, err := ReadOnlineCPUs(dir); err == nil {
			t.Errorf("online %q: %v, want an error", list, got)
		}
	}
}

// TestBaselineOfIdle works the baseline out by hand: cpu0 idle 8000 of
// 10000 us, cpu1 idle 1000 of 10000 us, so 11000 of 20000 us busy; this
// process used 1000 us of user and 1000 of system time meanwhile, left
// out: 9000 / 20000 = 45%, over a window of 10 ms.
func TestBaselineOfIdle(t *testing.T) {
	a, err := ReadIdle("testdata/idle-a", []int{0, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadIdle("testdata/idle-b", []int{0, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	for i := range a.CPUs {
		a.CPUs[i].At = t0
		b.CPUs[i].At = t0.Add(10 * time.Millisecond)
	}
	a.Process = ProcessCPU{User: time.Second, System: time.Second}
	b.Process = ProcessCPU{User: time.Second + time.Millisecond, System: time.Second + time.Millisecond}
	got, err := BaselineOfIdle(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.UtilPct-45) > 1e-9 || math.Abs(got.WindowS-0.01) > 1e-12 || got.Source != BaselineIdleResidency {
		t.Errorf("baseline %+v, want 45%% over 0.01 s from %s", got, BaselineIdleResidency)
	}
	if _, err := BaselineOfIdle(a, IdleSample{}); err == nil {
		t.Error("samples of different CPUs gave a baseline, want an error")
	}
	if _, err := BaselineOfIdle(a, a); err == nil {
		t.Error("an empty window gave a baseline, want an error")
	}
}
