package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/client"
	"wirespeed/internal/iterate"
	"wirespeed/internal/matrix"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sweep"
)

// matrixFlags are the flags of `wirespeed matrix`: all of run's, the
// sweep's sizes, the devices and the settings to vary.
type matrixFlags struct {
	run         runFlags
	sizes       string
	dev         string
	remoteDev   string
	remoteNetns string
	sets        []string
	progress    progressMode
	keep        bool
	settle      time.Duration
	resume      string
}

func newMatrixCmd(e *env) *cobra.Command {
	f := &matrixFlags{run: runFlags{spec: spec.Default()}}
	cmd := &cobra.Command{
		Use:   "matrix [HOST[:PORT]] --dev IFACE --set NAME=V1,V2 ... [run or sweep flags]",
		Short: "Run a test for every combination of offload features and MTU, one table row each",
		Long: `Run the test (or, with --sizes, the sweep) once for every combination of the
settings given with --set, changing this host's interface (--dev) and, when
asked, the server's (--remote-dev), and show one row per combination with
the throughput, its confidence interval, the iterations, and both sides' CPU
utilization and service demand.

Each --set is NAME=VALUE,VALUE...: an offload feature by its ethtool name
(tso, gso, gro, lro, sg, tx-checksumming or tx, rx-checksumming or rx) or a
kernel feature name (rx-gro-hw), with on and off, or mtu with sizes in
bytes. A setting applies to every device changed; prefix it with local: or
remote: for one side's only (--set remote:gro=on,off). The last --set varies
fastest. Every setting is checked on every device before anything changes.

--set direction=stream,maerts,bidir varies the test's direction instead of a
device: TCP_STREAM (client to server), TCP_MAERTS (server to client) and
TCP_BIDIR (both at once, a row with the sum and a line per direction under
it); --tradeoff adds direction=stream,maerts. A matrix of directions alone
needs no --dev. wirespeed compare on the document tests the directions
against each other.

Settings are made in a safe order (MTU, then features turned on, then off)
and checked afterwards: a combination the kernel cannot hold (tso on with
tx-checksumming off: TSO needs it) is skipped and said so, and features the
kernel moved on its own are named below the table.

Every device is put back exactly as it was when the matrix ends, however it
ends: normally, on an error, on Ctrl-C or SIGTERM (restored at once, then
the partial table), or on a panic. --keep leaves the last row's settings.
A server changes its own device only when started with --allow-netconf and
--psk-file, and this client proves the key (--psk-file); it restores the
device when the session ends, even if this client dies. --remote-netns
changes the remote device directly in a network namespace of this host
instead (a lab: wirespeed lab run matrix does that).

Some NICs reset their link when the MTU or an offload changes; --settle
waits after each change before measuring.`,
		Example: `  wirespeed matrix host --dev eth0 --set tso=on,off --set tx-checksumming=on,off
  wirespeed matrix host --dev eth0 --remote-dev eth1 --set mtu=1500,9000 -I 99,5 -o mtu.json
  wirespeed matrix host --dev eth0 --set gro=on,off --sizes 64,1460,64K -l 5
  wirespeed matrix host --tradeoff --iterations 5,5 -o dirs.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := dashHint(cmd, args); err != nil {
				return err
			}
			if len(args) > 1 {
				return usagef("matrix takes at most one HOST[:PORT], got %q", args)
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
			case fl.Changed("sizes") && fl.Changed("send-size"):
				return usagef("--sizes sets the send size of each point; drop -m")
			}
			return runMatrix(cmd.Context(), e, f, target, fl.Changed("port"), fl.Changed("sizes"))
		},
	}
	addRunFlags(cmd, &f.run)
	addProgressFlag(cmd, &f.progress)
	fl := cmd.Flags()
	f.run.record.register(fl)
	registerVerbose(fl, &f.run.verbose)
	fl.StringVar(&f.dev, "dev", "", "this host's interface to change (the one that carries the test)")
	fl.StringVar(&f.remoteDev, "remote-dev", "", "the server's interface to change too (the server needs --allow-netconf and --psk-file, this client --psk-file)")
	fl.StringVar(&f.remoteNetns, "remote-netns", "", "change --remote-dev in this network namespace of this host instead of asking the server (a lab's side a)")
	fl.StringArrayVar(&f.sets, "set", nil, "NAME=VALUE,VALUE... to vary, e.g. tso=on,off, mtu=1500,9000 or direction=stream,maerts,bidir; repeat for more (local: or remote: prefix for one side)")
	fl.StringVar(&f.sizes, "sizes", "", "run a sweep of these message sizes for every combination (as wirespeed sweep --sizes)")
	fl.BoolVar(&f.keep, "keep", false, "leave the last combination's settings in place instead of restoring them")
	fl.DurationVar(&f.settle, "settle", time.Second, "wait this long after changing settings before measuring (NICs that reset their link need a few seconds)")
	fl.StringVar(&f.resume, "resume", "", "continue the interrupted matrix in FILE.json: keep its complete rows, measure the others, write FILE.json after each (the other flags as the matrix had them)")
	return cmd
}

func runMatrix(ctx context.Context, e *env, f *matrixFlags, target string, portSet, sizesSet bool) error {
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
	plan := matrix.Plan{Base: base, Repeat: rep, Keep: f.keep, Settle: f.settle, Tool: tool()}
	if sizesSet {
		if plan.Sizes, err = spec.ParseSizes(f.sizes); err != nil {
			return usageError{err}
		}
	}
	sets := f.sets
	if f.run.tradeoff {
		// Both directions of every combination, one after the other.
		sets = append(slices.Clip(sets), matrix.Direction+"=stream,maerts")
	}
	if plan.Dimensions, err = matrix.ParseDimensions(sets); err != nil {
		if f.run.tradeoff && strings.Contains(err.Error(), "already varied") {
			return usagef("--tradeoff varies the direction (stream, then maerts); drop it or --set direction")
		}
		return usageError{err}
	}
	if matrix.VariesDirection(plan.Dimensions) && f.run.changed("test") {
		return usagef("-t %s: the direction dimension (--set direction or --tradeoff) sets each row's test; drop -t", base.Kind)
	}
	switch {
	case f.dev == "" && f.remoteDev == "" && matrix.ChangesDevices(plan.Dimensions):
		return usagef("matrix needs the interface to change: --dev IFACE (this host), --remote-dev IFACE (the server's), or both")
	case f.remoteNetns != "" && f.remoteDev == "":
		return usagef("--remote-netns names where --remote-dev is; give --remote-dev too")
	}
	for _, d := range plan.Dimensions {
		if d.Side == result.Local && f.dev == "" {
			return usagef("--set %s=...: give --dev, the local interface", d.Key())
		}
		if d.Side == result.Remote && f.remoteDev == "" {
			return usagef("--set %s=...: give --remote-dev, the server's interface", d.Key())
		}
	}
	if f.resume != "" {
		if err := f.resumeFrom(&plan, sizesSet); err != nil {
			return err
		}
	}
	c, err := connect(ctx, e, &f.run, target, portSet, base.IPVersion, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	// From here on, matrix.Run restores the devices on every path out;
	// when opening one fails, the ones opened are restored here.
	if plan.Changers, err = openChangers(e, f, c.Client); err != nil {
		return err
	}
	obs := &matrixObserver{e: e, progress: f.progress, text: !f.run.json, verbose: f.run.verbose, label: c.label, sizes: plan.Sizes}
	text := f.run.textOptions()
	text.Server = c.addr
	sinks := f.run.sinks(e.stdout, text)
	doc, runErr := matrix.Run(ctx, plan, matrix.Options{
		Measure:  c.iterate,
		Changed:  func(ctx context.Context) error { _, err := c.RefreshEnv(ctx); return err },
		Observer: obs,
		Save: func(doc *result.Document) error {
			f.run.record.apply(doc)
			return sinks.Emit(report.Doc{Results: doc, Partial: true})
		},
	})
	f.run.record.apply(doc)

	// The notes or the JSON, the file, and the command's error.
	if err := emit(sinks, report.Doc{Results: doc}); err != nil && runErr == nil {
		runErr = err
	}
	if len(doc.Matrix.RestoreErrors) > 0 {
		rerr := fmt.Errorf("restore failed: %s", strings.Join(doc.Matrix.RestoreErrors, "; "))
		return errors.Join(runErr, rerr)
	}
	if runErr != nil {
		return runErr
	}
	if doc.Interrupted {
		if left := matrix.NotMeasured(plan.Dimensions, doc); len(left) > 0 {
			again := "keep the matrix in a file with -o FILE.json to continue it with --resume"
			if out := f.run.output; strings.EqualFold(filepath.Ext(out), ".json") {
				again = "continue with the same command and --resume " + out
			}
			fmt.Fprintf(e.stderr, "matrix interrupted: %d of %d rows not measured: %s; %s\n",
				len(left), len(matrix.Combinations(plan.Dimensions)), strings.Join(left, "; "), again)
		}
		return errInterrupted
	}
	return nil
}

// resumeFrom makes plan continue the interrupted matrix in --resume's
// file, as sweep --resume does: the file is written back after each row
// (-o, if given, must name it), the sizes are the file's unless --sizes
// is given, and a file measured with other settings is refused, each
// difference named (matrix.Plan.Differences).
func (f *matrixFlags) resumeFrom(plan *matrix.Plan, sizesSet bool) error {
	if out := f.run.output; out != "" && out != f.resume {
		return usagef("--resume %s writes the matrix back to that file; drop -o %s or give the same name", f.resume, out)
	}
	prev, err := result.ReadFile(f.resume)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if prev.Command != "matrix" || prev.Matrix == nil {
		return fmt.Errorf("resume %s: it holds the result of `wirespeed %s`, not of a matrix", f.resume, prev.Command)
	}
	if !sizesSet {
		plan.Sizes = prev.Sizes
	}
	if diffs := plan.Differences(&prev, f.dev, f.remoteDev, f.remoteNetns); len(diffs) > 0 {
		return usagef("resume %s: the file was measured with other settings: %s; give the command line of the interrupted matrix, or start a new file with -o",
			f.resume, strings.Join(diffs, "; "))
	}
	f.run.output = f.resume
	plan.Doc = &prev
	return nil
}

// openChangers opens the devices to change: --dev on this host,
// --remote-dev in --remote-netns or through the server.
func openChangers(e *env, f *matrixFlags, c *client.Client) ([]matrix.Changer, error) {
	var chs []matrix.Changer
	if f.dev != "" {
		lc, err := matrix.OpenLocal(result.Local, f.dev, "", f.keep, e.log)
		if err != nil {
			return nil, labErr(err)
		}
		chs = append(chs, lc)
	}
	if f.remoteDev != "" {
		if f.remoteNetns == "" {
			return append(chs, matrix.NewRemote(c, f.remoteDev)), nil
		}
		lc, err := matrix.OpenLocal(result.Remote, f.remoteDev, f.remoteNetns, f.keep, e.log)
		if err != nil {
			for _, ch := range chs {
				ch.Abandon()
			}
			return nil, labErr(err)
		}
		chs = append(chs, lc)
	}
	return chs, nil
}

// matrixObserver shows a matrix as it goes: in text mode the heading and
// a table row per row on stdout; a line per iteration on stderr.
type matrixObserver struct {
	e        *env
	progress progressMode // --progress; a matrix has no live line
	text     bool
	verbose  bool // -v: every column
	label    string
	sizes    []int
	table    *report.MatrixTable

	// For the time left: when the matrix began, iterations finished and
	// the rows (of size points, with --sizes) they belong to.
	start    time.Time
	iters    int
	rowsDone int
	rowIters int // iterations in finished rows
}

func (o *matrixObserver) Begin(doc *result.Document) {
	o.table = report.NewMatrixTable(doc.Matrix, len(o.sizes) > 0, doc.Spec.Kind.RR(), doc.Repeat.ConfidenceLevel)
	if doc.Spec.Kind == spec.RRUL {
		o.table.WithUnderLoad() // idle and loaded latency columns (RRUL)
	}
	if o.verbose {
		o.table.Verbose()
	}
	if !o.text {
		return
	}
	first := doc.Spec
	if len(o.sizes) > 0 {
		first = sweep.AtSize(first, o.sizes[0])
	}
	report.Heading(o.e.stdout, first, o.label)
	if len(o.sizes) > 0 {
		fmt.Fprintf(o.e.stdout, "sweep of message sizes %s for every combination\n", sweep.FormatSizes(o.sizes))
	}
	report.MatrixHeading(o.e.stdout, doc.Matrix)
	fmt.Fprintln(o.e.stdout)
	o.table.Header(o.e.stdout)
}

func (o *matrixObserver) Iteration(i, n int, label string, ev iterate.Event) {
	if o.start.IsZero() {
		o.start = time.Now()
	}
	if !ev.Done {
		return
	}
	o.iters++
	size := ev.Result.Spec.SizeLabel()
	if ev.Stop {
		// A row (or, with --sizes, one size of a row) is done.
		o.rowsDone++
		o.rowIters += ev.Iteration
	}
	line := fmt.Sprintf("matrix: row %d of %d (%s), %s bytes; %s; %s",
		i, n, label, size, report.IterationProgress(ev.Iteration, ev.Max, ev.Result, ev.Confidence),
		matrixLeft(time.Since(o.start), o.iters, ev, o.pointsLeft(i, n, ev), o.rowsDone, o.rowIters))
	if o.progress == progressOff {
		return
	}
	// One whole line, however long: a log is read with grep.
	fmt.Fprintln(o.e.stderr, line)
}

// pointsLeft is how many measurements (rows, or row and size points with
// --sizes) start after the current one.
func (o *matrixObserver) pointsLeft(i, n int, ev iterate.Event) int {
	per := max(len(o.sizes), 1)
	k := 0 // the current point's index within its row
	if len(o.sizes) > 0 {
		k = max(slices.Index(o.sizes, ev.Result.Spec.SendSize), 0)
	}
	return (n-i)*per + (per - 1 - k)
}

// matrixLeft is "elapsed 1m2s, about 3m10s left": the mean time of an
// iteration so far times the iterations still to come, the current
// point's up to its maximum unless it stopped, and each point to come as
// many as the finished ones took on average (its maximum before any
// finished): a guess, shown with "about".
func matrixLeft(elapsed time.Duration, iters int, ev iterate.Event, pointsLeft, pointsDone, pointIters int) string {
	per := elapsed / time.Duration(max(iters, 1))
	perPoint := float64(ev.Max)
	if pointsDone > 0 {
		perPoint = float64(pointIters) / float64(pointsDone)
	}
	here := 0
	if !ev.Stop {
		here = max(int(math.Round(perPoint))-ev.Iteration, 1)
	}
	left := time.Duration((float64(here) + float64(pointsLeft)*perPoint) * float64(per))
	return fmt.Sprintf("elapsed %v, about %v left", elapsed.Round(time.Second), left.Round(time.Second))
}

func (o *matrixObserver) Row(row result.MatrixRow) {
	if o.text {
		o.table.Row(o.e.stdout, row)
	}
}

// Kept shows a row of the resumed matrix as a measured one.
func (o *matrixObserver) Kept(row result.MatrixRow) { o.Row(row) }
