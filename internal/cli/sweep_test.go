package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/servertest"
	"wirespeed/internal/spec"
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
		return report.WriteFile(path, *d, func(w io.Writer) { report.SweepTable(w, *d) })
	}
	var measured []int
	iterate := func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(client.IterationEvent)) (result.Result, error) {
		measured = append(measured, t.SendSize)
		return c.Iterate(ctx, t, rep, p)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	sw := &sweeper{base: base, rep: rep, sizes: sizes, doc: newSweepDoc(base, rep, sizes), iterate: iterate, save: save,
		progress: newProgress(&stderr, false, base, rep, len(sizes))}
	points := 0
	sw.onPoint = func(result.Point) {
		if points++; points == 2 {
			cancel()
		}
	}
	if err := sw.run(ctx); err != nil {
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
	if err := resumable(path, doc, base, rep, sizes); err != nil {
		t.Fatal(err)
	}
	measured = nil
	stderr.Reset()
	var rows []int
	sw = &sweeper{base: base, rep: rep, sizes: sizes, doc: doc, iterate: iterate, save: save,
		progress: newProgress(&stderr, false, base, rep, len(sizes)), onPoint: func(p result.Point) { rows = append(rows, p.MsgSize) }}
	if err := sw.run(context.Background()); err != nil {
		t.Fatal(err)
	}
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
func fakeIterate(ctx context.Context, t spec.Test, rep spec.Repeat, p func(client.IterationEvent)) (result.Result, error) {
	s := result.Summary{BitsPerSecond: float64(t.SendSize) * 1e6, ElapsedS: 1}
	return result.Result{Spec: t, Summary: s, Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Summary: s}}}, nil
}

// TestSweepInterruptedPoint: a point cut short is saved, marked, and run
// again on resume.
func TestSweepInterruptedPoint(t *testing.T) {
	base, rep, sizes := sweepSpec(), spec.DefaultRepeat(), []int{1, 2, 3}
	var saved []byte
	save := func(d *result.Document) error {
		var err error
		saved, err = json.Marshal(d)
		return err
	}
	calls := 0
	iterate := func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(client.IterationEvent)) (result.Result, error) {
		calls++
		r, err := fakeIterate(ctx, t, rep, p)
		r.Interrupted = t.SendSize == 2
		return r, err
	}
	sw := &sweeper{base: base, rep: rep, sizes: sizes, doc: newSweepDoc(base, rep, sizes), iterate: iterate, save: save}
	if err := sw.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var doc result.Document
	json.Unmarshal(saved, &doc)
	if calls != 2 || !doc.Interrupted || len(doc.Points) != 2 || doc.Points[1].Complete() {
		t.Fatalf("calls %d, interrupted %v, points %d", calls, doc.Interrupted, len(doc.Points))
	}
	calls = 0
	sw = &sweeper{base: base, rep: rep, sizes: sizes, doc: &doc, iterate: fakeIterate, save: save}
	sw.iterate = func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(client.IterationEvent)) (result.Result, error) {
		calls++
		return fakeIterate(ctx, t, rep, p)
	}
	if err := sw.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(saved, &doc)
	if calls != 2 || doc.Interrupted || len(doc.Points) != 3 || !doc.Points[1].Complete() {
		t.Errorf("resume: calls %d (want 2: the interrupted point and the last), interrupted %v, points %d", calls, doc.Interrupted, len(doc.Points))
	}
}

func TestResumeRefuses(t *testing.T) {
	base, rep, sizes := sweepSpec(), spec.DefaultRepeat(), []int{64, 1024}
	doc := newSweepDoc(base, rep, sizes)
	other := base
	other.Parallel, other.Duration = 4, 2*time.Second
	otherRep := rep
	otherRep.MaxIterations = 5
	tests := []struct {
		name  string
		base  spec.Test
		rep   spec.Repeat
		sizes []int
		want  []string
	}{
		{"same", base, rep, sizes, nil},
		{"spec", other, rep, sizes, []string{"parallel 1 in the file, 4 now", "duration_s 0.1 in the file, 2 now"}},
		{"repeat", base, otherRep, sizes, []string{"--iterations 1,1 -I 99,5 in the file, --iterations 5,1"}},
		{"sizes", base, rep, []int{64}, []string{"sizes 64,1024 in the file, 64 now"}},
		// The message size is the sweep's to set: -m is not compared.
		{"send size", atSize(base, 9), rep, sizes, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := resumable("f.json", doc, tt.base, tt.rep, tt.sizes)
			if tt.want == nil {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
		})
	}
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
