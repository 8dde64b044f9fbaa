package sweep

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/iterate"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

func testSpec() spec.Test {
	sp := spec.Default()
	sp.Duration = 100 * time.Millisecond
	sp.Interval = 0
	return sp
}

// fakeMeasure measures nothing: throughput is the message size in Mbit/s.
func fakeMeasure(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
	s := result.Summary{BitsPerSecond: float64(t.SendSize) * 1e6, ElapsedS: 1}
	return result.Result{Spec: t, Summary: s, Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Summary: s}}}, nil
}

// recorder is an Observer that writes what it is told as words, and
// cancels the sweep after a number of points measured.
type recorder struct {
	events []string
	after  int
	cancel func()
}

func (r *recorder) Begin(todo int)             { r.add("begin", todo) }
func (r *recorder) Kept(k int, p result.Point) { r.add("kept", p.MsgSize) }
func (r *recorder) Start(k, size int)          { r.add("start", size) }
func (r *recorder) Iteration(ev iterate.Event) {}
func (r *recorder) Measured(k int, p result.Point) {
	r.add("measured", p.MsgSize)
	if r.after--; r.after == 0 {
		r.cancel()
	}
}
func (r *recorder) add(what string, n int) {
	b, _ := json.Marshal(n)
	r.events = append(r.events, what+" "+string(b))
}

// TestResume cancels a sweep after two of its four points, then resumes
// it from the saved document: only the missing points run, the kept ones
// are shown in order, and the document ends complete.
func TestResume(t *testing.T) {
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Sizes: []int{1024, 2048, 4096, 8192}, Tool: result.Tool{Name: "test"}}
	var saved []byte
	saves := 0
	save := func(d *result.Document) error {
		saves++
		var err error
		saved, err = json.Marshal(d)
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{after: 2, cancel: cancel}
	doc, err := Run(ctx, plan, Options{Measure: fakeMeasure, Observer: rec, Save: save})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"begin 4", "start 1024", "measured 1024", "start 2048", "measured 2048"}
	if !slices.Equal(rec.events, want) {
		t.Errorf("events %q, want %q", rec.events, want)
	}
	// One save per point measured and one at the end.
	if saves != 3 || !doc.Interrupted || len(doc.Points) != 2 {
		t.Fatalf("saves %d, interrupted %v, %d points", saves, doc.Interrupted, len(doc.Points))
	}

	var prev result.Document
	if err := json.Unmarshal(saved, &prev); err != nil {
		t.Fatal(err)
	}
	if diffs := plan.Differences(&prev); diffs != nil {
		t.Fatalf("the saved sweep differs from its plan: %q", diffs)
	}
	plan.Doc = &prev
	rec = &recorder{}
	doc, err = Run(context.Background(), plan, Options{Measure: fakeMeasure, Observer: rec, Save: save})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"begin 2", "kept 1024", "kept 2048", "start 4096", "measured 4096", "start 8192", "measured 8192"}
	if !slices.Equal(rec.events, want) {
		t.Errorf("resumed events %q, want %q", rec.events, want)
	}
	if doc.Interrupted || len(doc.Points) != 4 {
		t.Fatalf("final: interrupted %v, %d points", doc.Interrupted, len(doc.Points))
	}
	for i, p := range doc.Points {
		// fakeMeasure's throughput is the size in Mbit/s: each point was
		// measured at its own size.
		if p.MsgSize != plan.Sizes[i] || p.Spec.SendSize != plan.Sizes[i] || p.Summary.BitsPerSecond != float64(plan.Sizes[i])*1e6 {
			t.Errorf("point %d: size %d send size %d throughput %v", i, p.MsgSize, p.Spec.SendSize, p.Summary.BitsPerSecond)
		}
	}
	if doc.Spec.SendSize != 1024 || doc.Summary.BitsPerSecond != 1024e6 || doc.Command != "sweep" || doc.Tool.Name != "test" {
		t.Errorf("the top level does not repeat the first point: %+v", doc.Summary)
	}
}

// TestInterruptedPoint: a point cut short is saved, marked, and run
// again on resume.
func TestInterruptedPoint(t *testing.T) {
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Sizes: []int{1, 2, 3}}
	var saved []byte
	save := func(d *result.Document) error {
		var err error
		saved, err = json.Marshal(d)
		return err
	}
	calls := 0
	measure := func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
		calls++
		r, err := fakeMeasure(ctx, t, rep, p)
		r.Interrupted = t.SendSize == 2
		return r, err
	}
	if _, err := Run(context.Background(), plan, Options{Measure: measure, Save: save}); err != nil {
		t.Fatal(err)
	}
	var doc result.Document
	json.Unmarshal(saved, &doc)
	if calls != 2 || !doc.Interrupted || len(doc.Points) != 2 || doc.Points[1].Complete() {
		t.Fatalf("calls %d, interrupted %v, points %d", calls, doc.Interrupted, len(doc.Points))
	}
	calls = 0
	plan.Doc = &doc
	measure = func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
		calls++
		return fakeMeasure(ctx, t, rep, p)
	}
	if _, err := Run(context.Background(), plan, Options{Measure: measure, Save: save}); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(saved, &doc)
	if calls != 2 || doc.Interrupted || len(doc.Points) != 3 || !doc.Points[1].Complete() {
		t.Errorf("resume: calls %d (want 2: the interrupted point and the last), interrupted %v, points %d", calls, doc.Interrupted, len(doc.Points))
	}
}

// TestFailedPoint: a point that fails with a partial result is kept and
// the error names its size; one that fails with nothing is not kept.
func TestFailedPoint(t *testing.T) {
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Sizes: []int{1, 2, 3}}
	boom := func(partial bool) Measure {
		return func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
			r, _ := fakeMeasure(ctx, t, rep, p)
			if t.SendSize != 2 {
				return r, nil
			}
			if !partial {
				r = result.Result{}
			}
			return r, context.DeadlineExceeded
		}
	}
	doc, err := Run(context.Background(), plan, Options{Measure: boom(true)})
	if err == nil || !strings.Contains(err.Error(), "size 2:") || len(doc.Points) != 2 {
		t.Errorf("partial: %v, %d points", err, len(doc.Points))
	}
	doc, err = Run(context.Background(), plan, Options{Measure: boom(false)})
	if err == nil || !strings.Contains(err.Error(), "size 2:") || len(doc.Points) != 1 {
		t.Errorf("nothing measured: %v, %d points", err, len(doc.Points))
	}
}

func TestDifferences(t *testing.T) {
	base, rep, sizes := testSpec(), spec.DefaultRepeat(), []int{64, 1024}
	doc := NewDocument(base, rep, sizes, result.Tool{})
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
		{"spec", other, rep, sizes, []string{"duration_s 0.1 in the file, 2 now", "parallel 1 in the file, 4 now"}},
		{"repeat", base, otherRep, sizes, []string{"iterations and confidence --iterations 1,1 -I 99,5 in the file, --iterations 5,1 -I 99,5 now"}},
		{"sizes", base, rep, []int{64}, []string{"sizes 64,1024 in the file, 64 now"}},
		// The message size is the sweep's to set: -m is not compared.
		{"send size", AtSize(base, 9), rep, sizes, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plan{Base: tt.base, Repeat: tt.rep, Sizes: tt.sizes}.Differences(doc)
			if !slices.Equal(got, tt.want) {
				t.Errorf("differences %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAtSize(t *testing.T) {
	rr := testSpec()
	rr.Kind = spec.TCPRR
	if got := AtSize(rr, 64); got.RequestSize != 64 || got.ResponseSize != 64 {
		t.Errorf("TCP_RR at 64: request %d response %d", got.RequestSize, got.ResponseSize)
	}
	if got := AtSize(testSpec(), 64); got.SendSize != 64 {
		t.Errorf("TCP_STREAM at 64: send size %d", got.SendSize)
	}
}
