// Package matrix runs a test (or a sweep) once for every combination of
// offload features and MTU, changing one device per side, into a results
// document (result.Document with its Matrix).
//
// It owns the guarantee that every device is put back as it was however
// the matrix ends: normally, on an error, when its context is cancelled
// (the CLI's on SIGINT or SIGTERM: restored at once, before Run even
// returns), or on a panic (restored, then the panic goes on). A Changer
// does the changing: Local for a device of this host (netconf), Remote
// for the server's (netconf requests over the control connection).
// Measuring is a function and printing an Observer, so the loop and its
// guarantees are tested with fakes; the CLI builds the plan from flags.
package matrix

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/iterate"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sweep"
)

// Plan is what a matrix measures, and on which devices.
type Plan struct {
	Base   spec.Test
	Repeat spec.Repeat
	// Sizes, when not empty, makes each row a sweep of these sizes.
	Sizes      []int
	Dimensions []Dimension
	// Changers change the devices, one per side. Run finishes them
	// (restores, or keeps with Keep) however it ends.
	Changers []Changer
	// Keep leaves the last row's settings in place after a matrix that
	// ended normally.
	Keep bool
	// Settle is the wait after a row's settings before measuring.
	Settle time.Duration
	Tool   result.Tool
	// Doc is the document of an interrupted matrix to continue (see
	// Differences): its complete rows are kept as they are and only the
	// others measured. Nil starts a new one.
	Doc *result.Document
}

// Observer is told how a matrix goes.
type Observer interface {
	// Begin: every setting was checked on every device; the rows follow.
	// doc.Matrix names the devices and the dimensions.
	Begin(doc *result.Document)
	// Iteration is an iteration event of row i (1-based) of n, label
	// naming its settings; it may run on the goroutine Measure calls it
	// from.
	Iteration(i, n int, label string, ev iterate.Event)
	// Row says a row was measured or skipped (row.Skipped says why).
	Row(row result.MatrixRow)
	// Kept says a row of the resumed document (Plan.Doc) is complete and
	// is kept as it is, not measured again.
	Kept(row result.MatrixRow)
}

// Options are how a matrix measures, and who is told.
type Options struct {
	// Measure measures one point of a row.
	Measure sweep.Measure
	// Changed runs after a row's settings are made on every device,
	// before Settle and the measurement (the client has the server
	// collect its environment again); nil for nothing. Its error ends
	// the matrix.
	Changed func(ctx context.Context) error
	// Observer may be nil.
	Observer Observer
	// Save writes the document after each row; nil for none.
	Save func(*result.Document) error
}

// Run checks every setting on every device, measures every combination
// in order and finishes the changers, however it ends. It returns the
// document (never nil: its Matrix.RestoreErrors lists the devices that
// could not be put back) and the error that ended the measuring.
func Run(ctx context.Context, plan Plan, opts Options) (*result.Document, error) {
	m := &matrixRun{plan: plan, opts: opts, obs: opts.Observer}
	if m.obs == nil {
		m.obs = nopObserver{}
	}
	err := m.run(ctx)
	return m.doc, err
}

type matrixRun struct {
	plan Plan
	opts Options
	obs  Observer
	doc  *result.Document
}

func (m *matrixRun) run(ctx context.Context) error {
	// A panic restores, then goes on. A signal (Ctrl-C, SIGTERM) cancels
	// ctx: the devices are restored at once, before the interrupted run
	// even returns, so that a second signal, which ends the process,
	// finds them restored; nothing re-raises the signal, which would end
	// the process before the partial table is shown.
	defer func() {
		if p := recover(); p != nil {
			m.abandon()
			panic(p)
		}
	}()
	stopAbandon := context.AfterFunc(ctx, m.abandon)
	defer stopAbandon()

	mx := &result.Matrix{Rows: []result.MatrixRow{}, Keep: m.plan.Keep}
	for _, d := range m.plan.Dimensions {
		mx.Dimensions = append(mx.Dimensions, d.record())
	}
	for _, ch := range m.plan.Changers {
		d := ch.Device()
		if ch.Side() == result.Local {
			mx.Local = &d
		} else {
			mx.Remote = &d
		}
	}
	r := m.plan.Repeat
	m.doc = &result.Document{
		Schema:  result.Schema,
		Tool:    m.plan.Tool,
		Command: "matrix",
		Result:  result.Result{Spec: m.plan.Base, Intervals: []result.Interval{}, Directions: []result.DirectionResult{}, Streams: []result.Stream{}},
		Repeat:  &r,
		Sizes:   m.plan.Sizes,
		Matrix:  mx,
	}
	if prev := m.plan.Doc; prev != nil {
		// A resumed matrix keeps its title and labels (the flags may
		// give others).
		m.doc.Title, m.doc.Labels = prev.Title, prev.Labels
	}

	runErr := m.check(ctx)
	if runErr == nil {
		runErr = m.rows(ctx)
	}
	// Restore (or keep), whatever happened above.
	keep := m.plan.Keep && ctx.Err() == nil && runErr == nil
	for _, ch := range m.plan.Changers {
		if err := ch.Finish(ctx, keep); err != nil {
			mx.RestoreErrors = append(mx.RestoreErrors, fmt.Sprintf("%s: %v", ch.Device().Dev, err))
		}
	}
	mx.Keep = keep && len(mx.RestoreErrors) == 0
	return runErr
}

// abandon restores every device now (a signal or a panic).
func (m *matrixRun) abandon() {
	for _, ch := range m.plan.Changers {
		ch.Abandon()
	}
}

// check checks every value of every setting on every device it applies
// to, before anything changes.
func (m *matrixRun) check(ctx context.Context) error {
	var errs []error
	for _, ch := range m.plan.Changers {
		if err := ch.Check(ctx, allFor(m.plan.Dimensions, ch.Side())); err != nil {
			if control.HasCode(err, control.CodeForbidden) {
				return fmt.Errorf("%w; or run the matrix with --dev only", err)
			}
			errs = append(errs, fmt.Errorf("%s (%s): %w", ch.Device().Dev, ch.Side(), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cannot make these settings, nothing was changed: %w", err)
	}
	return nil
}

// rows measures every combination in order, telling the observer of each
// row as it finishes and saving the document after each. A row the
// resumed document holds complete (Complete) is kept, not measured.
func (m *matrixRun) rows(ctx context.Context) error {
	combos := Combinations(m.plan.Dimensions)
	kept := map[string]result.MatrixRow{}
	if m.plan.Doc != nil && m.plan.Doc.Matrix != nil {
		for _, r := range m.plan.Doc.Matrix.Rows {
			if Complete(r) {
				kept[r.Label] = r
			}
		}
	}
	m.obs.Begin(m.doc)
	measured := 0
	for i, combo := range combos {
		settings := rowRecord(combo)
		label := result.RowLabel(settings)
		if r, ok := kept[label]; ok {
			r.Index = i + 1
			m.addRow(r)
			m.obs.Kept(r)
			if r.Skipped == "" {
				measured++
			}
			continue
		}
		if ctx.Err() != nil {
			m.doc.Interrupted = true
			break
		}
		row := result.MatrixRow{Index: i + 1, Label: label, Settings: settings, Points: []result.Point{}}
		skip, err := m.apply(ctx, combo, &row)
		if ctx.Err() != nil {
			// Interrupted while changing: the devices are being restored.
			row.Interrupted = true
			m.addRow(row)
			m.doc.Interrupted = true
			break
		}
		if err != nil {
			m.addRow(row)
			return err
		}
		if skip == "" {
			progress := func(ev iterate.Event) { m.obs.Iteration(row.Index, len(combos), row.Label, ev) }
			if err := m.measure(ctx, &row, testOf(m.plan.Base, combo), progress); err != nil {
				m.addRow(row)
				return err
			}
			measured++
		} else {
			row.Skipped = skip
		}
		m.addRow(row)
		m.obs.Row(row)
		if m.opts.Save != nil {
			if err := m.opts.Save(m.doc); err != nil {
				return err
			}
		}
		if row.Interrupted {
			m.doc.Interrupted = true
			break
		}
	}
	if measured == 0 && !m.doc.Interrupted {
		return errors.New("no combination could be measured; the notes above say why")
	}
	return nil
}

// apply makes a row's settings on every device. It returns why the row
// must be skipped (a setting failed or did not hold), or an error that
// ends the matrix (a device out of reach).
func (m *matrixRun) apply(ctx context.Context, combo []Setting, row *result.MatrixRow) (string, error) {
	var skips []string
	for _, ch := range m.plan.Changers {
		settings := settingsFor(combo, ch.Side())
		if len(settings) == 0 {
			continue
		}
		changes, err := ch.Set(ctx, settings)
		row.Changes = append(row.Changes, changes...)
		if err != nil {
			var end *EndError
			if errors.As(err, &end) {
				return "", fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
			}
			skips = append(skips, err.Error()) // names the device
		}
	}
	if len(skips) > 0 {
		return strings.Join(skips, "; "), nil
	}
	if m.opts.Changed != nil {
		if err := m.opts.Changed(ctx); err != nil {
			return "", fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
		}
	}
	if m.plan.Settle > 0 {
		select {
		case <-time.After(m.plan.Settle):
		case <-ctx.Done():
		}
	}
	return "", nil
}

// measure runs a row's point, or its sweep.
func (m *matrixRun) measure(ctx context.Context, row *result.MatrixRow, base spec.Test, progress func(iterate.Event)) error {
	rep := m.plan.Repeat
	if len(m.plan.Sizes) == 0 {
		res, err := m.opts.Measure(ctx, base, rep, progress)
		if err != nil && len(res.Directions) == 0 {
			return fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
		}
		row.Points = []result.Point{{MsgSize: base.MessageSize(), Result: res}}
		row.Interrupted = res.Interrupted || ctx.Err() != nil
		if err != nil {
			return fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
		}
		return nil
	}
	doc, err := sweep.Run(ctx, sweep.Plan{Base: base, Repeat: rep, Sizes: m.plan.Sizes, Tool: m.plan.Tool},
		sweep.Options{Measure: func(ctx context.Context, t spec.Test, rep spec.Repeat, _ func(iterate.Event)) (result.Result, error) {
			return m.opts.Measure(ctx, t, rep, progress)
		}})
	row.Points = doc.Points
	row.Interrupted = doc.Interrupted || ctx.Err() != nil
	if err != nil {
		return fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
	}
	return nil
}

// addRow puts a row in the document; the top level repeats the first
// measured point, as a sweep's does.
func (m *matrixRun) addRow(row result.MatrixRow) {
	m.doc.Matrix.Rows = append(m.doc.Matrix.Rows, row)
	if len(m.doc.Directions) == 0 && len(row.Points) > 0 {
		interrupted := m.doc.Interrupted
		m.doc.Result = row.Points[0].Result
		m.doc.Interrupted = interrupted
	}
}

type nopObserver struct{}

func (nopObserver) Begin(*result.Document)                    {}
func (nopObserver) Iteration(int, int, string, iterate.Event) {}
func (nopObserver) Row(result.MatrixRow)                      {}
func (nopObserver) Kept(result.MatrixRow)                     {}

// Complete reports whether a row was dealt with: measured to its end
// (every point complete), or skipped because the kernel would not take
// it. A resumed matrix keeps such rows and measures the others.
func Complete(r result.MatrixRow) bool {
	if r.Skipped != "" {
		return true
	}
	if r.Interrupted || len(r.Points) == 0 {
		return false
	}
	for _, p := range r.Points {
		if !p.Complete() {
			return false
		}
	}
	return true
}

// NotMeasured lists the labels of the combinations of dims that doc does
// not hold measured, in the order a matrix runs them: those it never
// reached and those it was interrupted in. A row the kernel would not
// take (Skipped) was dealt with and is not listed.
func NotMeasured(dims []Dimension, doc *result.Document) []string {
	done := map[string]bool{}
	if doc != nil && doc.Matrix != nil {
		for _, r := range doc.Matrix.Rows {
			if Complete(r) {
				done[r.Label] = true
			}
		}
	}
	var out []string
	for _, combo := range Combinations(dims) {
		if l := result.RowLabel(rowRecord(combo)); !done[l] {
			out = append(out, l)
		}
	}
	return out
}

// Differences lists how the matrix in prev was measured otherwise than
// plan asks, one phrase per setting, as a sweep's resume does
// (sweep.Differences: the test but for what the rows vary, the
// iterations and confidence, the sizes), then the settings varied and
// the devices changed (localDev and remoteDev, in remoteNetns, as the
// flags give them: "" for none). A matrix resumes only when there is
// none.
func (plan Plan) Differences(prev *result.Document, localDev, remoteDev, remoteNetns string) []string {
	var diffs []string
	var was []string
	if prev.Matrix != nil {
		for _, d := range prev.Matrix.Dimensions {
			was = append(was, d.Key()+"="+strings.Join(d.Values, ","))
		}
	}
	var now []string
	for _, d := range plan.Dimensions {
		r := d.record()
		now = append(now, r.Key()+"="+strings.Join(r.Values, ","))
	}
	if strings.Join(was, " ") != strings.Join(now, " ") {
		diffs = append(diffs, fmt.Sprintf("--set %s in the file, --set %s now", strings.Join(was, " --set "), strings.Join(now, " --set ")))
	}
	dev := func(flag string, d *result.MatrixDevice, name, netns string) {
		w, n := "none", "none"
		if d != nil {
			w = d.Dev
			if d.Netns != "" {
				w += " in " + d.Netns
			}
		}
		if name != "" {
			n = name
			if netns != "" {
				n += " in " + netns
			}
		}
		if w != n {
			diffs = append(diffs, fmt.Sprintf("%s %s in the file, %s now", flag, w, n))
		}
	}
	if prev.Matrix != nil {
		dev("--dev", prev.Matrix.Local, localDev, "")
		dev("--remote-dev", prev.Matrix.Remote, remoteDev, remoteNetns)
	}
	// The document's test is its first measured row's (addRow), with
	// that row's direction and, for sweeps, its first size.
	base := plan.Base
	if prev.Matrix != nil {
		combos := Combinations(plan.Dimensions)
		for _, r := range prev.Matrix.Rows {
			if len(r.Points) > 0 && r.Index >= 1 && r.Index <= len(combos) {
				base = testOf(plan.Base, combos[r.Index-1])
				break
			}
		}
	}
	return append(diffs, sweep.Differences(prev.Spec, base, prev.Repeat, plan.Repeat, prev.Sizes, plan.Sizes)...)
}
