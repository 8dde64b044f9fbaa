// Package sweep runs a test at each of a list of message sizes, one
// point each, as netperf's message-size sweeps do, into a results
// document (result.Document with sizes and points).
//
// A sweep is resumable: Run measures only the points its document does
// not hold complete, and hands the document to Options.Save after every
// point, so that an interrupted sweep keeps every finished point.
// Measuring is a function (Options.Measure) and printing an Observer, so
// the loop is tested without a network; the CLI gives it client.Iterate
// and an observer that prints through report.
package sweep

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"wirespeed/internal/iterate"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// Measure measures one point: the test t, repeated as rep asks, with its
// iteration events handed to progress (which may be nil).
type Measure func(ctx context.Context, t spec.Test, rep spec.Repeat, progress func(iterate.Event)) (result.Result, error)

// Plan is what a sweep measures.
type Plan struct {
	// Base is the test of every point but for its message size.
	Base   spec.Test
	Repeat spec.Repeat
	// Sizes are the points' message sizes, in the order measured.
	Sizes []int
	// Doc is the document of an interrupted sweep to continue (see
	// Differences); nil starts a new one.
	Doc *result.Document
	// Tool names the program in a new document.
	Tool result.Tool
}

// Observer is told how a sweep goes, in order. Its methods run on Run's
// goroutine (Iteration on the one Measure calls it from).
type Observer interface {
	// Begin says that todo of the plan's points are to be measured.
	Begin(todo int)
	// Kept says that point k (0-based) is complete in the resumed
	// document and is kept as it is.
	Kept(k int, p result.Point)
	// Start says that point k, of size bytes, starts.
	Start(k, size int)
	// Iteration is an iteration event of the point being measured.
	Iteration(ev iterate.Event)
	// Measured says that point k was measured (and saved).
	Measured(k int, p result.Point)
}

// Options are how a sweep measures, and who is told.
type Options struct {
	Measure Measure
	// Observer may be nil.
	Observer Observer
	// Save writes the document; nil for none. It is called after each
	// point measured and once at the end.
	Save func(*result.Document) error
}

// AtSize is the test of one point of a sweep: t with message size n
// (spec.Test.AtMessageSize: for a request/response test, n is both the
// request and the response size, as in netperf's TCP_RR sweeps).
func AtSize(t spec.Test, n int) spec.Test { return t.AtMessageSize(n) }

// NewDocument is the document of a sweep before its first point.
func NewDocument(base spec.Test, rep spec.Repeat, sizes []int, tool result.Tool) *result.Document {
	r := rep
	return &result.Document{
		Schema:  result.Schema,
		Tool:    tool,
		Command: "sweep",
		Result:  result.Result{Spec: AtSize(base, sizes[0]), Intervals: []result.Interval{}, Directions: []result.DirectionResult{}, Streams: []result.Stream{}},
		Repeat:  &r,
		Sizes:   sizes,
		Points:  []result.Point{},
	}
}

// Run measures the points of plan that its document does not hold
// complete yet, in the order of the sizes, and returns the document (never
// nil). It stops at the first interrupted point (the document then holds
// it, marked interrupted, and is saved) or at the first error; a point
// whose measurement failed with a partial result is kept in the document.
func Run(ctx context.Context, plan Plan, opts Options) (*result.Document, error) {
	doc := plan.Doc
	if doc == nil {
		doc = NewDocument(plan.Base, plan.Repeat, plan.Sizes, plan.Tool)
	}
	obs := opts.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	s := &sweeper{plan: plan, opts: opts, obs: obs, doc: doc}
	return doc, s.run(ctx)
}

type sweeper struct {
	plan Plan
	opts Options
	obs  Observer
	doc  *result.Document
}

func (s *sweeper) run(ctx context.Context) error {
	have := map[int]result.Point{}
	for _, p := range s.doc.Points {
		have[p.MsgSize] = p
	}
	s.doc.Sizes = s.plan.Sizes
	s.doc.Interrupted = false
	todo := 0
	for _, size := range s.plan.Sizes {
		if p, ok := have[size]; !ok || !p.Complete() {
			todo++
		}
	}
	s.obs.Begin(todo)
	for k, size := range s.plan.Sizes {
		if p, ok := have[size]; ok && p.Complete() {
			s.obs.Kept(k, p)
			continue
		}
		if ctx.Err() != nil {
			s.doc.Interrupted = true
			break
		}
		s.obs.Start(k, size)
		res, err := s.opts.Measure(ctx, AtSize(s.plan.Base, size), s.plan.Repeat, s.obs.Iteration)
		if err != nil && len(res.Directions) == 0 {
			return fmt.Errorf("size %d: %w", size, err)
		}
		p := result.Point{MsgSize: size, Result: res}
		have[size] = p
		s.setPoints(have)
		if res.Interrupted || ctx.Err() != nil {
			s.doc.Interrupted = true
		}
		if s.opts.Save != nil {
			if serr := s.opts.Save(s.doc); serr != nil {
				return serr
			}
		}
		s.obs.Measured(k, p)
		if err != nil {
			return fmt.Errorf("size %d: %w", size, err)
		}
		if s.doc.Interrupted {
			break
		}
	}
	s.setPoints(have)
	if s.opts.Save != nil {
		return s.opts.Save(s.doc)
	}
	return nil
}

// setPoints orders the points by the sizes and makes the top level of
// the document repeat the first one, as a run document with several runs
// repeats the first.
func (s *sweeper) setPoints(have map[int]result.Point) {
	s.doc.Points = s.doc.Points[:0]
	for _, n := range s.plan.Sizes {
		if p, ok := have[n]; ok {
			s.doc.Points = append(s.doc.Points, p)
		}
	}
	interrupted := s.doc.Interrupted
	if len(s.doc.Points) > 0 {
		s.doc.Result = s.doc.Points[0].Result
	}
	s.doc.Interrupted = interrupted
}

// Differences lists how the sweep in prev was measured otherwise than
// plan asks, one phrase per field: the test (but for its message size),
// the iterations and confidence, the sizes. A sweep resumes only when
// there is none.
func (plan Plan) Differences(prev *result.Document) []string {
	return Differences(prev.Spec, plan.Base, prev.Repeat, plan.Repeat, prev.Sizes, plan.Sizes)
}

// Differences lists how a document was measured (its test was, repeated
// as wasRepeat, at the sizes wasSizes) otherwise than a command asks
// now, one phrase per field, named by the spec's JSON field:
// "parallel 1 in the file, 4 now". The message size is left out of the
// tests: the sizes say it. A sweep or a matrix (matrix.Plan.Differences)
// resumes only when there is none.
func Differences(was, now spec.Test, wasRepeat *spec.Repeat, nowRepeat spec.Repeat, wasSizes, nowSizes []int) []string {
	var diffs []string
	for _, d := range spec.Diff(AtSize(was, 0), AtSize(now, 0)) {
		diffs = append(diffs, fmt.Sprintf("%s %s in the file, %s now", d.Name, d.A, d.B))
	}
	if wasRepeat == nil || *wasRepeat != nowRepeat {
		w := "none"
		if wasRepeat != nil {
			w = repeatFlags(*wasRepeat)
		}
		diffs = append(diffs, fmt.Sprintf("iterations and confidence %s in the file, %s now", w, repeatFlags(nowRepeat)))
	}
	if !slices.Equal(wasSizes, nowSizes) {
		diffs = append(diffs, fmt.Sprintf("sizes %s in the file, %s now", orNone(FormatSizes(wasSizes)), orNone(FormatSizes(nowSizes))))
	}
	return diffs
}

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// repeatFlags is r as the command-line flags that ask for it.
func repeatFlags(r spec.Repeat) string {
	return fmt.Sprintf("--iterations %d,%d -I %g,%g", r.MaxIterations, r.MinIterations, 100*r.ConfidenceLevel, r.ConfidenceWidthPct)
}

// FormatSizes writes sizes as --sizes reads them: "64,1460,8192".
func FormatSizes(sizes []int) string {
	s := make([]string, len(sizes))
	for i, n := range sizes {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

type nopObserver struct{}

func (nopObserver) Begin(int)                  {}
func (nopObserver) Kept(int, result.Point)     {}
func (nopObserver) Start(int, int)             {}
func (nopObserver) Iteration(iterate.Event)    {}
func (nopObserver) Measured(int, result.Point) {}
