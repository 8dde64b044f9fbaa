package sysinfo

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/measure"
)

// TestHelperSpin is not a test: TestBaselineResidency runs the test
// binary with WIRESPEED_SPIN=1 as a neighbour that keeps a CPU busy.
func TestHelperSpin(t *testing.T) {
	if os.Getenv("WIRESPEED_SPIN") != "1" {
		t.Skip("the busy neighbour of TestBaselineResidency")
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
	}
}

// TestBaselineResidency holds the baseline from idle residencies to two
// counts it does not make: the kernel's /proc/stat over the same window
// (sampled beside it, over 400 ms, so that its ticks of 10 ms are 1.25%
// of the window on 2 CPUs), and a neighbour process that keeps one CPU
// busy, which the baseline must see. This process's own CPU time is left
// out of the residency baseline, and the test's goroutines sleep.
func TestBaselineResidency(t *testing.T) {
	cpus, err := measure.ReadOnlineCPUs(measure.DefaultSysRoot)
	if err != nil {
		t.Skip(err)
	}
	if _, err := measure.ReadIdle(measure.DefaultSysRoot, cpus[:1], nil); err != nil {
		t.Skipf("no cpuidle residencies here: %v", err)
	}
	spin := exec.Command(os.Args[0], "-test.run=^TestHelperSpin$")
	spin.Env = append(os.Environ(), "WIRESPEED_SPIN=1")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { spin.Process.Kill(); spin.Wait() }()
	time.Sleep(50 * time.Millisecond)
	// A visit waits for its CPU: on a loaded host the two samples can take
	// long enough that /proc/stat's reads, beside them, cover another
	// window. Such an attempt is tried again, up to three times.
	for attempt := 1; ; attempt++ {
		res, stat, err := residencyAgainstStat(cpus)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("attempt %d: residency %+v; /proc/stat %.1f%% over %d ticks", attempt, res, stat.UtilPct, stat.Ticks)
		if res.WindowS > 0.44 {
			if attempt == 3 {
				t.Skipf("the samples took %.3f s for a window of 0.4 s in each of 3 attempts: the CPUs are too busy to compare", res.WindowS)
			}
			continue
		}
		if floor := 100 / float64(len(cpus)) * 0.9; res.UtilPct < floor {
			t.Errorf("residency baseline %.1f%% with a neighbour keeping one of %d CPUs busy: want at least %.0f%%", res.UtilPct, len(cpus), floor)
		}
		// The residency figure leaves this process out; /proc/stat cannot.
		if d := stat.UtilPct - res.UtilPct; math.Abs(d) > 6 {
			t.Errorf("residency baseline %.1f%%, /proc/stat %.1f%% over the same window: want them within 6 points", res.UtilPct, stat.UtilPct)
		}
		break
	}
	bl, err := TakeBaseline(context.Background(), "", BaselineWindow)

	if err != nil || bl.Source != measure.BaselineIdleResidency || bl.WindowS < ResidencyBaselineWindow.Seconds() {
		t.Errorf("TakeBaseline: %+v, %v; want one from %s over at least %v", bl, err, measure.BaselineIdleResidency, ResidencyBaselineWindow)
	}
	if bl != nil && bl.WindowS > 0.1 {
		t.Errorf("TakeBaseline took a window of %.3f s, want about %v", bl.WindowS, ResidencyBaselineWindow)
	}
}

// residencyAgainstStat takes the residency baseline and /proc/stat's over
// the same 400 ms.
func residencyAgainstStat(cpus []int) (measure.CPUBaseline, measure.CPUUsage, error) {
	a, err := sampleIdle(measure.DefaultSysRoot, cpus)
	if err != nil {
		return measure.CPUBaseline{}, measure.CPUUsage{}, err
	}
	s0, err := measure.ReadCPU(measure.DefaultProcRoot)
	if err != nil {
		return measure.CPUBaseline{}, measure.CPUUsage{}, err
	}
	time.Sleep(400 * time.Millisecond)
	b, err := sampleIdle(measure.DefaultSysRoot, cpus)
	if err != nil {
		return measure.CPUBaseline{}, measure.CPUUsage{}, err
	}
	s1, err := measure.ReadCPU(measure.DefaultProcRoot)
	if err != nil {
		return measure.CPUBaseline{}, measure.CPUUsage{}, err
	}
	res, err := measure.BaselineOfIdle(a, b)
	return res, measure.CPUDelta(s0, s1), err
}

// TestBaselineLeavesAffinity: the baseline moves a thread onto each CPU
// in turn; no thread of the process is left held to one CPU afterwards,
// though other goroutines make blocking calls meanwhile (which start
// threads, and a new thread takes its creator's affinity).
func TestBaselineLeavesAffinity(t *testing.T) {
	cpus, err := measure.ReadOnlineCPUs(measure.DefaultSysRoot)
	if err != nil || len(cpus) < 2 {
		t.Skipf("online cpus %v, %v: need two", cpus, err)
	}
	var want unix.CPUSet
	if err := unix.SchedGetaffinity(0, &want); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					os.ReadFile("/proc/self/stat")
					time.Sleep(100 * time.Microsecond)
				}
			}
		}()
	}
	if _, err := wakeCPUs(cpus); err != nil {
		close(stop)
		t.Skipf("cannot visit every cpu: %v", err)
	}
	for range 49 {
		// A thread left held to the last CPU would find the others
		// outside its affinity here.
		if _, err := wakeCPUs(cpus); err != nil {
			close(stop)
			t.Fatalf("a later baseline: %v", err)
		}
	}
	close(stop)
	wg.Wait()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &got); err != nil {
			continue // ended since the listing
		}
		if got != want {
			t.Errorf("thread %d: affinity of %d cpus after the baselines, want the process's %d", tid, got.Count(), want.Count())
		}
	}
	t.Logf("%d threads checked", len(tasks))
}
