package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPathsCheckedBeforeTheTest: an -o, --logfile or SQLite --archive
// that cannot be written is a usage error naming the path and what to
// do, before anything is measured: each run asks for a 5-second test
// (the embedded server, or a server that is not there) and must end in
// well under that. Issue 42: run --archive DIR measured, spooled and
// exited 0; -o /nonexistent/dir/out.json failed after the test on a
// hidden temporary name.
func TestPathsCheckedBeforeTheTest(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"run --archive DIR", []string{"run", "-l", "5", "--archive", dir}, []string{"--archive " + dir + " is a directory", filepath.Join(dir, "archive.db")}},
		{"run -o missing dir", []string{"run", "-l", "5", "-o", "/nonexistent/dir/out.json"}, []string{"-o /nonexistent/dir/out.json", "the directory /nonexistent/dir does not exist", "mkdir -p"}},
		{"run -o DIR.json", []string{"run", "-l", "5", "-o", filepath.Join(dir, "d.json")}, []string{"-o " + filepath.Join(dir, "d.json") + " is a directory"}},
		{"run --logfile DIR", []string{"run", "-l", "5", "--logfile", dir}, []string{"--logfile " + dir + " is a directory"}},
		{"run --archive under a file", []string{"run", "-l", "5", "--archive", filepath.Join(file, "a.db")}, []string{"--archive " + filepath.Join(file, "a.db")}},
		{"sweep --archive DIR", []string{"sweep", "127.0.0.1:1", "-l", "5", "--archive", dir}, []string{"--archive " + dir + " is a directory"}},
		{"matrix -o missing dir", []string{"matrix", "127.0.0.1:1", "-l", "5", "--set", "tso=on,off", "-o", "/nonexistent/dir/m.json"}, []string{"-o /nonexistent/dir/m.json", "does not exist"}},
		{"mesh --archive DIR", []string{"mesh", "--peers", "127.0.0.1:1,127.0.0.2:1", "-l", "5", "--archive", dir}, []string{"--archive " + dir + " is a directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasSuffix(tc.name, "DIR.json") {
				os.Mkdir(filepath.Join(dir, "d.json"), 0o755)
			}
			start := time.Now()
			code, _, errOut := execute(t, context.Background(), tc.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (usage): %s", code, ExitUsage, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q: %s", w, errOut)
				}
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v: measured before checking", d)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".wirespeed") {
			t.Errorf("left %s in %s", e.Name(), dir)
		}
	}
}

// TestReadersNeverCreateAnArchive: history, dashboard, archive export
// and prune with a SQLite file that is not there say so, naming it,
// exit 2, and leave no file (history --archive /tmp/typo.db made an
// empty archive and said no results matched, exit 0).
func TestReadersNeverCreateAnArchive(t *testing.T) {
	db := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{
		{"history", "--archive", db},
		{"history", "--archive", db, "--check"},
		{"dashboard", "--archive", db, "--listen", "127.0.0.1:0"},
		{"archive", "export", "--archive", db},
		{"archive", "prune", "--older-than", "30d", "--archive", db},
	} {
		code, _, errOut := execute(t, context.Background(), args...)
		if code != ExitUsage || !strings.Contains(errOut, "archive "+db+" does not exist") {
			t.Errorf("%s: exit %d, %q; want 2 saying %s does not exist", strings.Join(args, " "), code, errOut, db)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%s created %s", strings.Join(args, " "), db)
		}
	}
	// A writer still makes it.
	if code, _, errOut := execute(t, context.Background(), "archive", "import", "--archive", db, "/nonexistent.json"); code == ExitUsage {
		t.Errorf("archive import: exit %d: %s", code, errOut)
	}
}
