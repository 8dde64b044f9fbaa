package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"wirespeed/internal/record"

	"wirespeed/internal/archive"
	"wirespeed/internal/result"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/testkit"
)

// writeDocs writes synthetic results to files, one document each: 12
// near 941 Mbit/s with TSO on at B, then `after` near 612 with it off.
func writeDocs(t *testing.T, dir string, after int) []string {
	t.Helper()
	t0 := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	noise := []float64{1, -2, 3, 0, -1, 2, -3, 1, 0, 2, -2, 1, 0, -1, 2, 1}
	var files []string
	for i := 0; i < 12+after; i++ {
		s := archive.Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: (941 + noise[i%len(noise)]) * 1e6, TSO: true}
		if i >= 12 {
			s.BitsPerSecond, s.TSO = (612+noise[i%len(noise)])*1e6, false
		}
		path := filepath.Join(dir, s.Started.Format("150405")+".json")
		if err := result.WriteFile(path, s.Document()); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	return files
}

func TestArchiveImportHistoryCheck(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	files := writeDocs(t, dir, 4)
	ctx := context.Background()

	// The steady part first: --check passes.
	code, out, errOut := execute(t, ctx, append([]string{"archive", "import", "--archive", db}, files[:12]...)...)
	if code != ExitOK || !strings.Contains(out, "12 documents read, 12 new (12 results), 0 already") {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = execute(t, ctx, "history", "--archive", db, "--check", "--tolerance", "2%")
	if code != ExitOK || !strings.HasPrefix(out, "ok: A->B TCP_STREAM") {
		t.Errorf("check of a steady series: exit %d: %s%s", code, out, errOut)
	}
	// Then all of them, again: only the new ones are added.
	code, out, errOut = execute(t, ctx, append([]string{"archive", "import", "--archive", db}, files...)...)
	if code != ExitOK || !strings.Contains(out, "16 documents read, 4 new (4 results), 12 already") {
		t.Fatalf("import again: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = execute(t, ctx, "history", "--archive", db, "--pair", "A->B")
	if code != ExitOK {
		t.Fatalf("history: exit %d: %s", code, errOut)
	}
	want := "--- change: A->B TCP_STREAM fell 941 -> 612 Mbit/s (-35%) at 2026-12-01 14:00:00, p < 0.001, worse; at that time B: tso on -> off"
	if !strings.Contains(out, want) {
		t.Errorf("history lacks\n%s\n%s", want, out)
	}
	// The first point after the change comes right after the line.
	if i := strings.Index(out, want); i < 0 || !regexp.MustCompile(`^\s*2026-12-01 14:00:00\s+612\s`).MatchString(out[i+len(want):]) {
		t.Errorf("the change line is not before the point at 14:00:\n%s", out)
	}
	code, out, _ = execute(t, ctx, "history", "--archive", db, "--json")
	var doc struct {
		Series []struct {
			Key     struct{ Source, Destination string }
			Points  []json.RawMessage
			Changes []struct {
				Index int
				Env   []struct{ Host, Name, Before, After string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK {
		t.Fatalf("history --json: exit %d, %v:\n%s", code, err, out)
	}
	if len(doc.Series) != 1 || len(doc.Series[0].Points) != 16 || len(doc.Series[0].Changes) != 1 ||
		doc.Series[0].Changes[0].Index != 12 || doc.Series[0].Changes[0].Env[0].Name != "tso" {
		t.Errorf("history --json: %+v", doc)
	}
	// The newest point is after the change: a regression, exit 1, unless
	// the tolerance is wider than the drop.
	for _, tc := range []struct {
		tolerance string
		code      int
	}{{"2%", ExitRuntime}, {"40%", ExitOK}} {
		code, out, errOut = execute(t, ctx, "history", "--archive", db, "--check", "--newest", "4", "--tolerance", tc.tolerance)
		if code != tc.code {
			t.Errorf("--check --tolerance %s: exit %d, want %d: %s%s", tc.tolerance, code, tc.code, out, errOut)
		}
	}
	if !strings.Contains(out, "at that time B: tso on -> off") {
		t.Errorf("check output lacks the environment change:\n%s", out)
	}
	// Too little history: exit 2.
	if code, _, errOut := execute(t, ctx, "history", "--archive", db, "--check", "--newest", "15"); code != ExitUsage || !strings.Contains(errOut, "nothing to check") {
		t.Errorf("--check --newest 15: exit %d: %s", code, errOut)
	}
	png := filepath.Join(dir, "h.png")
	if code, _, errOut := execute(t, ctx, "history", "--archive", db, "-o", png); code != ExitOK {
		t.Errorf("history -o: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(png); err != nil || len(b) < 1000 || string(b[1:4]) != "PNG" {
		t.Errorf("history -o %s: %d bytes, %v", png, len(b), err)
	}

	// Export, prune everything, import the export: all back.
	export := filepath.Join(dir, "all.jsonl")
	if code, _, errOut := execute(t, ctx, "archive", "export", "--archive", db, "-o", export); code != ExitOK {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	if code, out, _ := execute(t, ctx, "archive", "prune", "--archive", db, "--older-than", "0d"); code != ExitOK || !strings.Contains(out, "removed 16 documents (16 results)") {
		t.Errorf("prune: exit %d: %s", code, out)
	}
	if code, out, _ := execute(t, ctx, "archive", "import", "--archive", db, export); code != ExitOK || !strings.Contains(out, "16 new") {
		t.Errorf("import of the export: exit %d: %s", code, out)
	}
}

func TestArchiveBadInput(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db := filepath.Join(dir, "a.db")
	notDoc := filepath.Join(dir, "prom.json")
	os.WriteFile(notDoc, []byte(`{"status":"success","data":{}}`), 0o644)
	code, _, errOut := execute(t, ctx, "archive", "import", "--archive", db, notDoc)
	if code != ExitRuntime || !strings.Contains(errOut, "prom.json") || !strings.Contains(errOut, "not a wirespeed results or mesh document") {
		t.Errorf("import of a non-result: exit %d: %s", code, errOut)
	}
	// A malformed target is refused before anything is measured.
	start := time.Now()
	code, _, errOut = execute(t, ctx, "run", "-l", "5", "--archive", "postgress://u:secret@db/x")
	if code != ExitUsage || !strings.Contains(errOut, `scheme "postgress"`) || strings.Contains(errOut, "secret") || time.Since(start) > 3*time.Second {
		t.Errorf("run --archive postgress://: exit %d after %v: %s", code, time.Since(start), errOut)
	}
	t.Setenv(ArchiveEnv, "postgres://u:secret@[::1/x")
	code, _, errOut = execute(t, ctx, "run", "-l", "5")
	if code != ExitUsage || !strings.Contains(errOut, ArchiveEnv) || strings.Contains(errOut, "secret") {
		t.Errorf("run with a malformed %s: exit %d: %s", ArchiveEnv, code, errOut)
	}
	if code, _, errOut := execute(t, ctx, "history"); code != ExitUsage || !strings.Contains(errOut, "postgres") {
		t.Errorf("history with a malformed %s: exit %d: %s", ArchiveEnv, code, errOut)
	}
	t.Setenv(ArchiveEnv, "")
	if code, _, errOut := execute(t, ctx, "history"); code != ExitUsage || !strings.Contains(errOut, "no archive") {
		t.Errorf("history without an archive: exit %d: %s", code, errOut)
	}
}

// TestRunArchiveSpool: a run whose archive is broken still succeeds,
// keeps its result in the spool and says so; the next run with the
// archive repaired writes both. The archived figure is the document's.
func TestRunArchiveSpool(t *testing.T) {
	backendTargets(t, func(t *testing.T, good, bad string, repair func()) {
		dir := t.TempDir()
		t.Setenv(SpoolEnv, filepath.Join(dir, "spool"))
		ctx := context.Background()
		out1 := filepath.Join(dir, "1.json")
		code, _, errOut := execute(t, ctx, "run", "-l", "0.3", "-i", "0", "--archive", bad, "-o", out1)
		if code != ExitOK || !strings.Contains(errOut, "the result is kept in") || !strings.Contains(errOut, "archive flush") {
			t.Fatalf("run into a broken archive: exit %d: %s", code, errOut)
		}
		repair()
		// WIRESPEED_ARCHIVE stands for --archive.
		t.Setenv(ArchiveEnv, good)
		out2 := filepath.Join(dir, "2.json")
		code, _, errOut = execute(t, ctx, "run", "-l", "0.3", "-i", "0", "-o", out2)
		if code != ExitOK || !strings.Contains(errOut, "wrote 1 document(s) spooled earlier") {
			t.Fatalf("run: exit %d: %s", code, errOut)
		}
		target, _ := archive.ParseTarget(good)
		a, err := archive.Open(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		rows, err := a.Results(ctx, archive.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 {
			t.Fatalf("%d results archived, want 2", len(rows))
		}
		for i, f := range []string{out1, out2} {
			doc, err := result.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if rows[i].Figures[record.Throughput.Name] != doc.Summary.BitsPerSecond || !rows[i].Started.Equal(doc.Started.Truncate(time.Microsecond)) {
				t.Errorf("archived %v at %v; the document says %v at %v", rows[i].Figures[record.Throughput.Name], rows[i].Started, doc.Summary.BitsPerSecond, doc.Started)
			}
		}
		// Importing the -o files adds nothing: they are the archived
		// documents.
		code, out, _ := execute(t, ctx, "archive", "import", out1, out2)
		if code != ExitOK || !strings.Contains(out, "0 new") {
			t.Errorf("import of the -o files: exit %d: %s", code, out)
		}
	})
}

// backendTargets runs fn with a SQLite and a PostgreSQL archive: a good
// target, a broken one (a corrupt file; a wrong password) and the
// repair that makes the broken one take writes again.
func backendTargets(t *testing.T, fn func(t *testing.T, good, bad string, repair func())) {
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "a.db")
		os.WriteFile(db, []byte(strings.Repeat("not sqlite ", 500)), 0o644)
		fn(t, db, db, func() { os.Remove(db) })
	})
	t.Run("postgres", func(t *testing.T) {
		good := testkit.Postgres(t)
		u, _ := url.Parse(good)
		u.User = url.UserPassword(u.User.Username(), "wrong")
		fn(t, good, u.String(), func() {})
	})
}

// TestArchiveProcesses: six wirespeed processes importing into one new
// archive at once (the first ones creating it) lose nothing, on both
// back ends; and archive flush writes what a broken archive spooled.
func TestArchiveProcesses(t *testing.T) {
	bin := buildBinary(t)
	backendTargets(t, func(t *testing.T, good, bad string, repair func()) {
		repair() // a good archive first; a broken one below
		dir := t.TempDir()
		const procs, each = 6, 8
		var cmds []*exec.Cmd
		for p := 0; p < procs; p++ {
			var files []string
			for i := 0; i < each; i++ {
				s := archive.Synthetic{Source: fmt.Sprintf("p%d", p), Destination: "B", Started: time.Date(2026, 12, 1, 0, i, 0, 0, time.UTC), BitsPerSecond: 1e9}
				f := filepath.Join(dir, fmt.Sprintf("%d-%d.json", p, i))
				if err := result.WriteFile(f, s.Document()); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			cmd := exec.Command(bin, append([]string{"archive", "import", "--archive", good}, files...)...)
			cmd.Env = append(os.Environ(), SpoolEnv+"="+filepath.Join(dir, "spool"))
			cmds = append(cmds, cmd)
		}
		outs := make([][]byte, procs)
		errs := make([]error, procs)
		var wg sync.WaitGroup
		for p, cmd := range cmds {
			wg.Add(1)
			go func() { defer wg.Done(); outs[p], errs[p] = cmd.CombinedOutput() }()
		}
		wg.Wait()
		for p := range cmds {
			if errs[p] != nil {
				t.Errorf("process %d: %v: %s", p, errs[p], outs[p])
			}
		}
		target, _ := archive.ParseTarget(good)
		a, err := archive.Open(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.Count(context.Background())
		a.Close()
		if err != nil || c.Documents != procs*each {
			t.Errorf("archive holds %+v, %v; want %d documents", c, err, procs*each)
		}

		// A broken archive spools; flush writes it once repaired.
		if target.Backend == archive.SQLite {
			bad = filepath.Join(dir, "broken.db")
			os.WriteFile(bad, []byte(strings.Repeat("not sqlite ", 500)), 0o644)
			repair = func() { os.Remove(bad) }
		}
		t.Setenv(SpoolEnv, filepath.Join(dir, "spool"))
		spoolTarget, _ := archive.ParseTarget(bad)
		if _, err := (archive.Spool{Dir: filepath.Join(dir, "spool")}).Keep(context.Background(), spoolTarget, record.Doc{Results: ptrTo(archive.Synthetic{Source: "A", Destination: "B", Started: time.Now(), BitsPerSecond: 1e9}.Document())}); err != nil {
			t.Fatal(err)
		}
		repair()
		flushTo := bad
		if target.Backend == archive.Postgres {
			flushTo = good // the same target, with the right password
		}
		code, out, errOut := execute(t, context.Background(), "archive", "flush", "--archive", flushTo)
		if code != ExitOK || !strings.Contains(out, "wrote 1 spooled documents") {
			t.Errorf("archive flush: exit %d: %s%s", code, out, errOut)
		}
	})
}

// TestHistoryNamesGovernor: results whose destination's CPUs went from
// the powersave governor to performance, and rose: history's change
// line names the governor's change.
func TestHistoryNamesGovernor(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	noise := []float64{1, -2, 3, 0, -1, 2, -3, 1, 0, 2, -2, 1}
	var files []string
	for i := range 20 {
		gov, bps := "powersave", 612.0
		if i >= 12 {
			gov, bps = "performance", 941.0
		}
		s := archive.Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: (bps + noise[i%len(noise)]) * 1e6, TSO: true,
			Remote: func(e *sysinfo.Env) {
				e.CPUFreq = &sysinfo.CPUFreq{Available: true, Driver: "acpi-cpufreq", Governors: map[int]string{0: gov, 1: gov}}
			}}
		path := filepath.Join(dir, fmt.Sprintf("%02d.json", i))
		if err := result.WriteFile(path, s.Document()); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	db := filepath.Join(dir, "a.db")
	ctx := context.Background()
	if code, out, errOut := execute(t, ctx, append([]string{"archive", "import", "--archive", db}, files...)...); code != ExitOK {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut := execute(t, ctx, "history", "--archive", db)
	want := "--- change: A->B TCP_STREAM rose 612 -> 941 Mbit/s (+54%) at 2026-12-01 14:00:00, p = 0.001; at that time B: governor powersave -> performance"
	if code != ExitOK || !strings.Contains(out, want) {
		t.Errorf("history: exit %d; want the line\n%s\nin\n%s%s", code, want, out, errOut)
	}
}

func ptrTo[T any](v T) *T { return &v }
