package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/iterate"
	"wirespeed/internal/report"
	"wirespeed/internal/run"
	"wirespeed/internal/spec"
)

// defaultSizes is the sweep of the issue that asked for sweeps: small
// messages, an Ethernet MSS, a page multiple, and a large write.
const defaultSizes = "1,64,1460,8192,131000"

// sweepFlags are the flags of `wirespeed sweep`: all of run's, plus the
// sizes and the file to resume.
type sweepFlags struct {
	run    runFlags
	sizes  string
	resume string
}

func newSweepCmd(e *env) *cobra.Command {
	f := &sweepFlags{run: runFlags{spec: spec.Default()}}
	cmd := &cobra.Command{
		Use:   "sweep [HOST[:PORT]]",
		Short: "Run a test at each of a list of message sizes and show netperf's table, one row per size",
		Long: `Run a test at each message size of --sizes (the send size, -m, of each
point) and show netperf's table, one row per size, with the confidence
interval and CPU columns. Every run flag applies to every point; CPU is
measured by default (--cpu=false to skip).

Progress goes to stderr: a live line when it is a terminal, plain lines
otherwise. With -o FILE.json the results document is written again after
every point (atomically), so an interrupted sweep keeps every finished
point, and --resume FILE.json continues it: points already complete are
kept, the others run. Resuming checks that the file was measured with the
same test settings, iterations and sizes as the command line.`,
		Example: `  wirespeed sweep host --sizes 1,64,1460,8192,131000 -I 99,5 -o sweep.json
  wirespeed sweep host --sizes 64..65536x2 -l 5 -t TCP_MAERTS
  wirespeed sweep host --sizes 64..65536x2 -l 5 -t TCP_MAERTS --resume sweep.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("sweep takes at most one HOST[:PORT], got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target := ""
			if len(args) == 1 {
				target = args[0]
			}
			fl := cmd.Flags()
			f.run.changed = fl.Changed
			switch {
			case fl.Changed("send-size"):
				return usagef("sweep sets the send size of each point from --sizes; drop -m")
			case fl.Changed("tradeoff"):
				return usagef("sweep runs one test per point; --tradeoff does not apply (sweep -t TCP_STREAM, then -t TCP_MAERTS)")
			}
			return runSweep(cmd.Context(), e, f, target, fl.Changed("port"), fl.Changed("sizes"))
		},
	}
	addRunFlags(cmd, &f.run)
	fl := cmd.Flags()
	fl.StringVar(&f.sizes, "sizes", defaultSizes, "message sizes, one point each: a list (1,64,1460,8K) and ranges FROM..TOxFACTOR (64..65536x2) or FROM..TO+STEP")
	fl.StringVar(&f.resume, "resume", "", "continue the interrupted sweep in FILE.json: keep its complete points, run the others, write FILE.json after each")
	return cmd
}

// atSize is the test of one point of a sweep: t with message size n. For
// a request/response test, n is both the request and the response size,
// as in netperf's TCP_RR sweeps (-r 1,1, -r 64,64, ...).
func atSize(t spec.Test, n int) spec.Test {
	if t.Kind.RR() {
		t.RequestSize, t.ResponseSize = n, n
		return t
	}
	t.SendSize = n
	return t
}

func runSweep(ctx context.Context, e *env, f *sweepFlags, target string, portSet, sizesSet bool) error {
	base, err := f.run.buildSpec()
	if err != nil {
		return err
	}
	rep, err := f.run.measure.repeat()
	if err != nil {
		return err
	}
	sizes, err := spec.ParseSizes(f.sizes)
	if err != nil {
		return usageError{err}
	}
	out := f.run.output
	doc := newSweepDoc(base, rep, sizes)
	if f.resume != "" {
		if out != "" && out != f.resume {
			return usagef("--resume %s writes the sweep back to that file; drop -o %s or give the same name", f.resume, out)
		}
		out = f.resume
		prev, err := readSweep(f.resume)
		if err != nil {
			return err
		}
		if !sizesSet {
			sizes = prev.Sizes
		}
		if err := resumable(f.resume, prev, base, rep, sizes); err != nil {
			return err
		}
		doc = prev
	}
	c, err := connect(ctx, e, &f.run, target, portSet, base.IPVersion, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	label := c.label

	text := !f.run.json
	prog := newProgress(e.stderr, isTerminal(e.stderr), base, rep, len(sizes))
	defer prog.stop()
	sw := &sweeper{
		base:  base,
		rep:   rep,
		sizes: sizes,
		doc:   doc,
		iterate: func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (run.Result, error) {
			res, err := c.Iterate(ctx, t, rep, p)
			res.Remote.Address = c.addr
			return res, err
		},
		progress: prog,
	}
	if out != "" {
		sw.save = func(d *run.Document) error {
			return report.WriteFile(out, *d, func(w io.Writer) { report.SweepTable(w, *d) })
		}
	}
	if text {
		report.Heading(e.stdout, atSize(base, sizes[0]), label)
		fmt.Fprintf(e.stdout, "sweep of message sizes %s\n\n", joinInts(sizes))
		report.SweepHeader(e.stdout, rep.ConfidenceLevel, base.Kind)
		sw.onPoint = func(p run.Point) {
			prog.above(func() { report.SweepRow(e.stdout, p) })
		}
	}
	runErr := sw.run(ctx)
	prog.stop()
	if text {
		report.SweepNotes(e.stdout, *sw.doc)
	}
	if f.run.json {
		if err := report.JSON(e.stdout, *sw.doc); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	if sw.doc.Interrupted {
		return errInterrupted
	}
	return nil
}

// newSweepDoc is the document of a sweep before its first point.
func newSweepDoc(base spec.Test, rep spec.Repeat, sizes []int) *run.Document {
	r := rep
	return &run.Document{
		Schema:  run.Schema,
		Tool:    run.Tool{Name: "wirespeed", Version: version()},
		Command: "sweep",
		Result:  run.Result{Spec: atSize(base, sizes[0]), Intervals: []run.Interval{}, Directions: []run.DirectionResult{}, Streams: []run.Stream{}},
		Repeat:  &r,
		Sizes:   sizes,
		Points:  []run.Point{},
	}
}

// sweeper runs the points of a sweep that its document does not hold
// complete yet, in the order of the sizes, and saves the document after
// each. Its parts are functions so that a test can run it without a
// network.
type sweeper struct {
	base  spec.Test
	rep   spec.Repeat
	sizes []int
	doc   *run.Document
	// iterate measures one point.
	iterate func(context.Context, spec.Test, spec.Repeat, func(iterate.Event)) (run.Result, error)
	// save writes the document; nil for none.
	save func(*run.Document) error
	// onPoint is called with each point, kept or measured, in order.
	onPoint  func(run.Point)
	progress *progress
}

// run measures the missing points. It stops at the first interrupted
// point (the document then holds it, marked interrupted, and is saved) or
// at the first error.
func (s *sweeper) run(ctx context.Context) error {
	have := map[int]run.Point{}
	for _, p := range s.doc.Points {
		have[p.MsgSize] = p
	}
	s.doc.Sizes = s.sizes
	s.doc.Interrupted = false
	todo := 0
	for _, size := range s.sizes {
		if p, ok := have[size]; !ok || !p.Complete() {
			todo++
		}
	}
	s.progress.begin(todo)
	for k, size := range s.sizes {
		if p, ok := have[size]; ok && p.Complete() {
			s.progress.kept(k, size)
			if s.onPoint != nil {
				s.onPoint(p)
			}
			continue
		}
		if ctx.Err() != nil {
			s.doc.Interrupted = true
			break
		}
		s.progress.point(k, size)
		res, err := s.iterate(ctx, atSize(s.base, size), s.rep, s.progress.iteration)
		if err != nil && len(res.Directions) == 0 {
			return fmt.Errorf("size %d: %w", size, err)
		}
		p := run.Point{MsgSize: size, Result: res}
		have[size] = p
		s.setPoints(have)
		if res.Interrupted || ctx.Err() != nil {
			s.doc.Interrupted = true
		}
		if s.save != nil {
			if serr := s.save(s.doc); serr != nil {
				return serr
			}
		}
		s.progress.pointDone(k, p)
		if s.onPoint != nil {
			s.onPoint(p)
		}
		if err != nil {
			return fmt.Errorf("size %d: %w", size, err)
		}
		if s.doc.Interrupted {
			break
		}
	}
	s.setPoints(have)
	if s.save != nil {
		return s.save(s.doc)
	}
	return nil
}

// setPoints orders the points by the sizes and makes the top level of
// the document repeat the first one, as a run document with several runs
// repeats the first.
func (s *sweeper) setPoints(have map[int]run.Point) {
	s.doc.Points = s.doc.Points[:0]
	for _, n := range s.sizes {
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

// readSweep reads a sweep's results document to resume it.
func readSweep(path string) (*run.Document, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	var doc run.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("resume %s: not a wirespeed results document: %w", path, err)
	}
	switch {
	case doc.Schema != run.Schema:
		return nil, fmt.Errorf("resume %s: schema %q, this wirespeed reads %q", path, doc.Schema, run.Schema)
	case doc.Command != "sweep":
		return nil, fmt.Errorf("resume %s: it holds the result of `wirespeed %s`, not of a sweep", path, doc.Command)
	case len(doc.Sizes) == 0:
		return nil, fmt.Errorf("resume %s: the sweep lists no sizes", path)
	}
	return &doc, nil
}

// resumable checks that the sweep in prev was measured with the settings
// asked now: the same test (but for its message size), the same
// iterations and confidence, the same sizes. The error names every field
// that differs.
func resumable(path string, prev *run.Document, base spec.Test, rep spec.Repeat, sizes []int) error {
	var diffs []string
	for _, d := range spec.Diff(atSize(prev.Spec, 0), atSize(base, 0)) {
		diffs = append(diffs, fmt.Sprintf("%s %s in the file, %s now", d.Name, d.A, d.B))
	}
	if prev.Repeat == nil || *prev.Repeat != rep {
		was := "none"
		if prev.Repeat != nil {
			was = repeatString(*prev.Repeat)
		}
		diffs = append(diffs, fmt.Sprintf("iterations and confidence %s in the file, %s now", was, repeatString(rep)))
	}
	if !slices.Equal(prev.Sizes, sizes) {
		diffs = append(diffs, fmt.Sprintf("sizes %s in the file, %s now", joinInts(prev.Sizes), joinInts(sizes)))
	}
	if len(diffs) > 0 {
		return usagef("resume %s: the file was measured with other settings: %s; give the command line of the interrupted sweep, or start a new file with -o",
			path, strings.Join(diffs, "; "))
	}
	return nil
}

func repeatString(r spec.Repeat) string {
	return fmt.Sprintf("--iterations %d,%d -I %g,%g", r.MaxIterations, r.MinIterations, 100*r.ConfidenceLevel, r.ConfidenceWidthPct)
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
