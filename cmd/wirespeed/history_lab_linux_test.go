package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/testkit"
)

// TestHistoryFindsLabHalving is issue 42's lab case end to end: the same
// command through a tbf of 1 Gbit/s, 4 runs, then through one of 500
// Mbit/s (a lab made again at that rate), archived with --archive.
// After 3 slow runs and after 4, history finds the step (one change
// point, fell, the qdisc's rate named) and history --check exits 1
// naming the drop, its p and the qdisc. 10 runs with no change: no
// change point, --check exits 0. The archive is SQLite; with
// WIRESPEED_TEST_POSTGRES, the same documents (-o) are imported into a
// PostgreSQL archive and read the same way.
func TestHistoryFindsLabHalving(t *testing.T) {
	testkit.Serial(t)
	nstest.RequireRoot(t)
	dir := t.TempDir()
	archives := []string{filepath.Join(dir, "halving.db")}
	steady := []string{filepath.Join(dir, "steady.db")}
	var docs, steadyDocs []string
	if os.Getenv(testkit.PostgresEnv) != "" {
		archives = append(archives, testkit.Postgres(t))
		steady = append(steady, testkit.Postgres(t))
	}
	// A first run through a new lab is often the slowest (the first of
	// a busy run's 1 Gbit/s iterations read 839 ± 79%): one unarchived
	// run warms each lab up.
	warm := func(l *lab.Lab, addr string) {
		t.Helper()
		labRun(t, l, addr, "-l", "0.5", "-i", "0", "--cpu=false")
	}
	runs := 0
	measure := func(l *lab.Lab, addr, db string, into *[]string) {
		t.Helper()
		runs++
		out := filepath.Join(dir, fmt.Sprintf("run-%02d.json", runs))
		labRun(t, l, addr, "-l", "0.5", "-i", "0", "--iterations", "3,3", "--cpu=false", "--archive", db, "-o", out)
		*into = append(*into, out)
	}
	// history runs `wirespeed history args...` against each archive
	// (importing the new documents into PostgreSQL first) and returns
	// what it printed and its exit status.
	history := func(targets []string, docs []string, args ...string) []string {
		t.Helper()
		var outs []string
		for i, target := range targets {
			if i > 0 && len(docs) > 0 {
				if b, err := wirespeed(append([]string{"archive", "import", "--archive", target}, docs...)...).CombinedOutput(); err != nil {
					t.Fatalf("archive import into archive %d: %v\n%s", i, err, b)
				}
			}
			cmd := wirespeed(append([]string{"history", "--archive", target}, args...)...)
			b, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, fmt.Sprintf("exit %d\n%s", code, b))
		}
		return outs
	}
	start := time.Now()
	fast := nstest.NewLab(t, lab.Config{Name: fmt.Sprintf("h%d-1g", os.Getpid()), RateBitsPerSecond: 1e9})
	addr := labServer(t, fast, 7575)
	warm(fast, addr)
	for i := 0; i < 4; i++ {
		measure(fast, addr, archives[0], &docs)
	}
	slow := nstest.NewLab(t, lab.Config{Name: fmt.Sprintf("h%d-500m", os.Getpid()), RateBitsPerSecond: 500e6})
	addr = labServer(t, slow, 7575)
	warm(slow, addr)
	for _, low := range []int{3, 4} {
		for len(docs) < 4+low {
			measure(slow, addr, archives[0], &docs)
		}
		for k, out := range history(archives, docs) {
			t.Logf("4+%d, archive %d, history:\n%s", low, k, out)
			if !strings.HasPrefix(out, "exit 0\n") || !strings.Contains(out, fmt.Sprintf("%d points, 1 change points", 4+low)) ||
				!strings.Contains(out, "--- change: ") || !strings.Contains(out, " fell ") || !strings.Contains(out, "qdisc tbf") {
				t.Errorf("4+%d, archive %d: history does not show the step with the qdisc's rate:\n%s", low, k, out)
			}
		}
		for k, out := range history(archives, nil, "--check") {
			t.Logf("4+%d, archive %d, history --check:\n%s", low, k, out)
			if !strings.HasPrefix(out, "exit 1\n") || !strings.Contains(out, "regression: ") || !strings.Contains(out, " fell ") ||
				!strings.Contains(out, "before the change point at") || !strings.Contains(out, "qdisc tbf") || !strings.Contains(out, "p ") {
				t.Errorf("4+%d, archive %d: history --check does not exit 1 naming the drop, its p and the qdisc:\n%s", low, k, out)
			}
		}
	}
	for i := 0; i < 10; i++ {
		measure(slow, addr, steady[0], &steadyDocs)
	}
	for k, out := range history(steady, steadyDocs) {
		t.Logf("10 steady, archive %d, history:\n%s", k, out)
		if !strings.HasPrefix(out, "exit 0\n") || !strings.Contains(out, "10 points, 0 change points") || !strings.Contains(out, "cannot be told from noise here") {
			t.Errorf("10 steady runs, archive %d: want no change point and the smallest step it could see:\n%s", k, out)
		}
	}
	for k, out := range history(steady, nil, "--check") {
		if !strings.HasPrefix(out, "exit 0\n") || !strings.Contains(out, "ok: ") {
			t.Errorf("10 steady runs, archive %d: history --check, want exit 0:\n%s", k, out)
		}
	}
	t.Logf("%d runs and the histories in %v", runs, time.Since(start).Round(time.Second))
}
