package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sweep"
)

// defaultSizes is the sweep of the issue that asked for sweeps: small
// messages, an Ethernet MSS, a page multiple, and a large write.
const defaultSizes = "1,64,1460,8192,131000"

// sweepFlags are the flags of `wirespeed sweep`: all of run's, plus the
// sizes and the file to resume.
type sweepFlags struct {
	run      runFlags
	sizes    string
	resume   string
	progress progressMode
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
			if err := dashHint(cmd, args); err != nil {
				return err
			}
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
	addProgressFlag(cmd, &f.progress)
	fl := cmd.Flags()
	f.run.record.register(fl)
	registerVerbose(fl, &f.run.verbose)
	fl.StringVar(&f.sizes, "sizes", defaultSizes, "message sizes, one point each: a list (1,64,1460,8K) and ranges FROM..TOxFACTOR (64..65536x2) or FROM..TO+STEP")
	fl.StringVar(&f.resume, "resume", "", "continue the interrupted sweep in FILE.json: keep its complete points, run the others, write FILE.json after each")
	return cmd
}

func runSweep(ctx context.Context, e *env, f *sweepFlags, target string, portSet, sizesSet bool) error {
	base, err := f.run.buildSpec()
	if err != nil {
		return err
	}
	if err := f.run.useArchive(ctx, e); err != nil {
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
	plan := sweep.Plan{Base: base, Repeat: rep, Sizes: sizes, Tool: tool()}
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
			plan.Sizes = prev.Sizes
		}
		if diffs := plan.Differences(prev); len(diffs) > 0 {
			return usagef("resume %s: the file was measured with other settings: %s; give the command line of the interrupted sweep, or start a new file with -o",
				f.resume, strings.Join(diffs, "; "))
		}
		plan.Doc = prev
	}
	if plan.Doc == nil {
		plan.Doc = sweep.NewDocument(plan.Base, plan.Repeat, plan.Sizes, plan.Tool)
	}
	f.run.record.apply(plan.Doc)
	sizes = plan.Sizes
	c, err := connect(ctx, e, &f.run, target, portSet, base.IPVersion, nil)
	if err != nil {
		return err
	}
	defer c.Close()

	text := !f.run.json
	prog := newProgress(e.stderr, f.progress, base, rep, len(sizes))
	defer prog.stop()
	obs := sweepObserver{progress: prog, verbose: f.run.verbose}
	f.run.output = out
	sinks := f.run.sinks(e.stdout, f.run.textOptions())
	// Every point saves the document (-o), so that --resume finds it.
	opts := sweep.Options{Measure: c.iterate, Observer: &obs,
		Save: func(d *result.Document) error { return sinks.Emit(report.Doc{Results: d, Partial: true}) }}
	if text {
		report.Record(e.stdout, plan.Doc.Title, plan.Doc.Labels)
		report.Heading(e.stdout, sweep.AtSize(base, sizes[0]), c.label)
		fmt.Fprintf(e.stdout, "sweep of message sizes %s\n\n", sweep.FormatSizes(sizes))
		report.SweepHeader(e.stdout, rep.ConfidenceLevel, base.Kind, f.run.verbose)
		obs.stdout = e.stdout
	}
	doc, runErr := sweep.Run(ctx, plan, opts)
	prog.stop()
	if err := emit(sinks, report.Doc{Results: doc}); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil {
		return runErr
	}
	if doc.Interrupted {
		return errInterrupted
	}
	return nil
}

// sweepObserver shows a sweep as it goes: progress on stderr and, in
// text mode (stdout set), the table's row of each point, kept or
// measured.
type sweepObserver struct {
	*progress
	stdout  io.Writer
	verbose bool // -v: every column
}

func (o *sweepObserver) Kept(k int, p result.Point) {
	o.progress.Kept(k, p)
	o.row(p)
}

func (o *sweepObserver) Measured(k int, p result.Point) {
	o.progress.Measured(k, p)
	o.row(p)
}

func (o *sweepObserver) row(p result.Point) {
	if o.stdout != nil {
		o.above(func() { report.SweepRow(o.stdout, p, o.verbose) })
	}
}

// readSweep reads a sweep's results document to resume it.
func readSweep(path string) (*result.Document, error) {
	doc, err := result.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	switch {
	case doc.Command != "sweep":
		return nil, fmt.Errorf("resume %s: it holds the result of `wirespeed %s`, not of a sweep", path, doc.Command)
	case len(doc.Sizes) == 0:
		return nil, fmt.Errorf("resume %s: the sweep lists no sizes", path)
	}
	return &doc, nil
}
