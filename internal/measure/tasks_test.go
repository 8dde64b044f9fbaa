package measure

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fixtures tasks-a and tasks-b are two readings of a proc tree 2.5 s
// apart: process 100 is this side's (threads 100 and 101), 200 a busy
// loop whose name holds spaces and parentheses, 300 a kernel thread, 400
// starts during the window, 500 is idle and 600 ends during it.

func TestReadProcesses(t *testing.T) {
	got, err := ReadProcesses(fixtureRoot("tasks-a"))
	if err != nil {
		t.Fatal(err)
	}
	want := Tasks{
		100: {ID: 100, Name: "wirespeed", UserTicks: 50, SystemTicks: 100, LastCPU: 1},
		200: {ID: 200, Name: "busy (loop) x", UserTicks: 1000, SystemTicks: 5, LastCPU: 0},
		300: {ID: 300, Name: "ksoftirqd/1", SystemTicks: 10, LastCPU: 1, Kernel: true},
		500: {ID: 500, Name: "sh", UserTicks: 7, SystemTicks: 3, LastCPU: 0},
		600: {ID: 600, Name: "cc1", UserTicks: 500, SystemTicks: 20, LastCPU: 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadProcesses mismatch (-want +got):\n%s", diff)
	}
	if _, err := ReadProcesses(fixtureRoot("missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadProcesses(missing root) error = %v, want fs.ErrNotExist", err)
	}
}

func TestTaskDelta(t *testing.T) {
	a, err := ReadProcesses(fixtureRoot("tasks-a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadProcesses(fixtureRoot("tasks-b"))
	if err != nil {
		t.Fatal(err)
	}
	// Without 100 (ourselves) and the kernel thread: 200 used 180+2
	// ticks, 1.82 s of 2.5 s = 72.8%; 400 started and used 30+10, 16%;
	// 500 nothing; 600 ended and is lost. Total 222 ticks: 88.8%.
	got := TaskDelta(a, b, 2.5, 100)
	want := TaskUsage{UtilPct: 88.8, Busiest: []TaskCPU{
		{ID: 200, Name: "busy (loop) x", UserS: 1.8, SystemS: 0.02, UtilPct: 72.8, LastCPU: 0},
		{ID: 400, Name: "make", UserS: 0.3, SystemS: 0.1, UtilPct: 16, LastCPU: 1},
	}}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("TaskDelta mismatch (-want +got):\n%s", diff)
	}

	// Threads, by their schedstat: 101 ran 2.4 s (its ticks say the
	// same, 90+150), 96% of a CPU, and waited 0.4 s for one, 16%; 100
	// ran 0.5 s, 20%, where its ticks caught only 10+10 (8%): run time
	// comes from schedstat, the user/system split from the ticks.
	ta, err := ReadThreads(fixtureRoot("tasks-a"), 100)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := ReadThreads(fixtureRoot("tasks-b"), 100)
	if err != nil {
		t.Fatal(err)
	}
	gotT := TaskDelta(ta, tb, 2.5)
	wantT := TaskUsage{UtilPct: 104, Busiest: []TaskCPU{
		{ID: 101, Name: "wirespeed", UserS: 0.9, SystemS: 1.5, UtilPct: 96, LastCPU: 1, WaitPct: 16},
		{ID: 100, Name: "wirespeed", UserS: 0.1, SystemS: 0.1, UtilPct: 20, LastCPU: 0},
	}}
	if diff := cmp.Diff(wantT, gotT, approx); diff != "" {
		t.Errorf("TaskDelta of threads mismatch (-want +got):\n%s", diff)
	}
	if got := TaskDelta(a, b, 0); got.UtilPct != 0 || got.Busiest != nil {
		t.Errorf("TaskDelta over an empty window = %+v, want nothing", got)
	}
}

func TestParseTaskStat(t *testing.T) {
	for _, bad := range []string{"", "12 comm S 1", "12 (x) S 1 2 3", "12 (x) S 1 1 1 0 -1 zz 0 0 0 0 1 2"} {
		if _, err := parseTaskStat([]byte(bad)); err == nil {
			t.Errorf("parseTaskStat(%q) succeeded, want an error", bad)
		}
	}
}

// TestReadThreadsLive reads this test process's threads: the thread
// running the test has used some CPU by now.
func TestReadThreadsLive(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc here")
	}
	ts, err := ReadThreads(DefaultProcRoot, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts[os.Getpid()]; !ok || len(ts) == 0 {
		t.Errorf("threads of %d: %v, want the main thread among them", os.Getpid(), ts)
	}
}
