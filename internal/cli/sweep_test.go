package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/iterate"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/servertest"
	"wirespeed/internal/spec"
	"wirespeed/internal/sweep"
)

// loopback starts a server on 127.0.0.1:0 and dials it.
func loopback(t *testing.T) *client.Client {
	t.Helper()
	addr, _ := servertest.Start(t, server.Config{})
	return servertest.Dial(t, client.Config{Addr: addr, Logger: slog.New(slog.DiscardHandler)})
}

func sweepSpec() spec.Test {
	sp := spec.Default()
	sp.Duration = 100 * time.Millisecond
	sp.Interval = 0
	sp.CPU = true
	return sp
}

// TestSweepResume interrupts a sweep on loopback after two of its four
// points (cancelling its context once the second is in), then resumes it
// from the file: only the two missing points run, and the file ends
// complete.
func TestSweepResume(t *testing.T) {
	c := loopback(t)
	path := filepath.Join(t.TempDir(), "sweep.json")
	base, rep, sizes := sweepSpec(), spec.DefaultRepeat(), []int{1024, 2048, 4096, 8192}
	save := func(d *result.Document) error {
		return report.WriteFile(path, report.Doc{Results: d}, report.TextOptions{})
	}
	var measured []int
	measure := func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
		measured = append(measured, t.SendSize)
		return c.Iterate(ctx, t, rep, p)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	plan := sweep.Plan{Base: base, Repeat: rep, Sizes: sizes}
	obs := &cancelObserver{progress: newProgress(&stderr, progressAuto, base, rep, len(sizes)), after: 2, cancel: cancel}
	if _, err := sweep.Run(ctx, plan, sweep.Options{Measure: measure, Observer: obs, Save: save}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(measured, []int{1024, 2048}) {
		t.Fatalf("first session measured %v, want 1024 and 2048", measured)
	}
	doc, err := readSweep(path)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Interrupted || len(doc.Points) != 2 || !doc.Points[0].Complete() || !doc.Points[1].Complete() {
		t.Fatalf("interrupted file: interrupted %v, %d points", doc.Interrupted, len(doc.Points))
	}
	if !strings.Contains(stderr.String(), "size 2 of 4 (2048 bytes): iteration 1 of at most 1") {
		t.Errorf("progress lines:\n%s", stderr.String())
	}

	// Resume with the same settings.
	if diffs := plan.Differences(doc); len(diffs) > 0 {
		t.Fatal(diffs)
	}
	measured = nil
	stderr.Reset()
	plan.Doc = doc
	obs = &cancelObserver{progress: newProgress(&stderr, progressAuto, base, rep, len(sizes))}
	if _, err := sweep.Run(context.Background(), plan, sweep.Options{Measure: measure, Observer: obs, Save: save}); err != nil {
		t.Fatal(err)
	}
	rows := obs.rows
	if !slices.Equal(measured, []int{4096, 8192}) {
		t.Errorf("resumed session measured %v, want only 4096 and 8192", measured)
	}
	if !slices.Equal(rows, sizes) {
		t.Errorf("table rows %v, want every size in order", rows)
	}
	if strings.Count(stderr.String(), "kept") != 2 {
		t.Errorf("progress does not say the first two points were kept:\n%s", stderr.String())
	}
	doc, err = readSweep(path)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Interrupted || len(doc.Points) != 4 {
		t.Fatalf("final file: interrupted %v, %d points", doc.Interrupted, len(doc.Points))
	}
	for i, p := range doc.Points {
		if p.MsgSize != sizes[i] || !p.Complete() || p.Spec.SendSize != sizes[i] || p.Summary.BitsPerSecond <= 0 || p.Summary.LocalCPU == nil {
			t.Errorf("point %d: size %d complete %v send size %d throughput %v", i, p.MsgSize, p.Complete(), p.Spec.SendSize, p.Summary.BitsPerSecond)
		}
	}
	if doc.Spec.SendSize != sizes[0] || doc.Summary.BitsPerSecond != doc.Points[0].Summary.BitsPerSecond {
		t.Errorf("the top level does not repeat the first point")
	}
}

// fakeIterate measures nothing: throughput is the message size in Mbit/s.
func fakeIterate(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
	s := result.Summary{BitsPerSecond: float64(t.SendSize) * 1e6, ElapsedS: 1}
	return result.Result{Spec: t, Summary: s, Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Summary: s}}}, nil
}

// cancelObserver is the progress of a sweep that records the order of
// the points shown and cancels the sweep after the first few.
type cancelObserver struct {
	*progress
	rows   []int
	after  int
	cancel func()
}

func (o *cancelObserver) Kept(k int, p result.Point) {
	o.progress.Kept(k, p)
	o.rows = append(o.rows, p.MsgSize)
}

func (o *cancelObserver) Measured(k int, p result.Point) {
	o.progress.Measured(k, p)
	if o.rows = append(o.rows, p.MsgSize); len(o.rows) == o.after {
		o.cancel()
	}
}

// TestReadSweep: only a sweep's document resumes.
func TestReadSweep(t *testing.T) {
	dir := t.TempDir()
	runDoc := filepath.Join(dir, "run.json")
	os.WriteFile(runDoc, []byte(`{"schema":"wirespeed/result/v1","command":"run"}`), 0o644)
	if _, err := readSweep(runDoc); err == nil || !strings.Contains(err.Error(), "not of a sweep") {
		t.Errorf("a run's document: %v", err)
	}
	if _, err := readSweep(filepath.Join(dir, "none.json")); err == nil {
		t.Errorf("a missing file resumed")
	}
}

func TestSweepCommand(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "s.csv")
	code, out, errOut := execute(t, context.Background(), "sweep", "--sizes", "1K,64K", "-l", "0.1", "-i", "0", "-o", csvPath)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Throughput", "Service", "   1024 ", "  65536 "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "size 2 of 2 (65536 bytes)") {
		t.Errorf("stderr lacks progress:\n%s", errOut)
	}
	b, _ := os.ReadFile(csvPath)
	if n := strings.Count(string(b), "\n"); n != 3 {
		t.Errorf("csv has %d lines, want a header and 2 points:\n%s", n, b)
	}
	// Resume needs the same settings.
	jsonPath := filepath.Join(dir, "s.json")
	if code, _, errOut := execute(t, context.Background(), "sweep", "--sizes", "1K", "-l", "0.1", "-i", "0", "-o", jsonPath); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = execute(t, context.Background(), "sweep", "-l", "0.2", "-i", "0", "--resume", jsonPath)
	if code != ExitUsage || !strings.Contains(errOut, "duration_s 0.1 in the file, 0.2 now") {
		t.Errorf("resume with another length: exit %d, %s", code, errOut)
	}
	code, out, errOut = execute(t, context.Background(), "sweep", "-l", "0.1", "-i", "0", "--resume", jsonPath, "--json")
	if code != ExitOK {
		t.Fatalf("resume: exit %d, %s", code, errOut)
	}
	var doc result.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Points) != 1 || doc.Command != "sweep" {
		t.Errorf("resumed document: %v %s", err, out)
	}
}

func TestSweepUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "-m", "1K"}, "--sizes"},
		{[]string{"sweep", "--tradeoff"}, "--tradeoff"},
		{[]string{"sweep", "--sizes", "0"}, "between 1"},
		{[]string{"sweep", "--sizes", "64..128"}, "factor"},
		{[]string{"sweep", "--resume", "a.json", "-o", "b.json"}, "--resume"},
		{[]string{"sweep", "a", "b"}, "at most one"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errOut := execute(t, context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, ExitUsage, tt.want)
			}
		})
	}
}

// TestProgressOnPipe: on a writer that is not a terminal (a pipe, a
// log: here a bytes.Buffer) a sweep's and a matrix's progress are whole
// lines, one per iteration however long (this one is over 100 columns), never
// a continuation line grep would find without its size; --progress=off
// shows nothing, and --progress takes only auto, on or off.
func TestProgressOnPipe(t *testing.T) {
	rep := spec.Repeat{MaxIterations: 5, MinIterations: 3}
	done := iterate.Event{Iteration: 1, Max: 5, Done: true}
	done.Result.Summary.BitsPerSecond = 940e6
	done.Result.Spec = spec.Default()
	for _, mode := range []progressMode{progressAuto, progressOn, progressOff} {
		var buf bytes.Buffer
		p := newProgress(&buf, mode, spec.Default(), rep, 2)
		p.Begin(2)
		p.Start(0, 1024)
		p.Iteration(iterate.Event{Iteration: 1, Max: 5})
		p.Iteration(done)
		p.stop()
		o := &matrixObserver{e: &env{stderr: &buf}, progress: mode, sizes: []int{1024}}
		o.Iteration(1, 2, "tso=on", done)
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if mode == progressOff {
			if buf.Len() != 0 {
				t.Errorf("--progress=off wrote %q", buf.String())
			}
			continue
		}
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "sweep: size 1 of 2 (1024 bytes): iteration 1 of at most 5: 940.00 ") ||
			!strings.HasSuffix(lines[0], " left") || !strings.HasPrefix(lines[1], "matrix: row 1 of 2 (tso=on), ") ||
			!strings.HasSuffix(lines[1], " left") {
			t.Errorf("--progress=%s on a pipe: %q, want one whole sweep line and one whole matrix line", mode, lines)
		}
	}
	code, _, errOut := execute(t, context.Background(), "sweep", "--progress", "sometimes")
	if code != ExitUsage || !strings.Contains(errOut, "want auto, on or off") {
		t.Errorf("sweep --progress sometimes: exit %d, %q", code, errOut)
	}
}
