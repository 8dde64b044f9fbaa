package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/vishvananda/netns"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/iterate"
	"wirespeed/internal/netconf"
	"wirespeed/internal/report"
	"wirespeed/internal/run"
	"wirespeed/internal/spec"
	"wirespeed/internal/sweep"
)

// maxCombinations bounds a matrix: every combination is at least one
// full measurement.
const maxCombinations = 256

// matrixFlags are the flags of `wirespeed matrix`: all of run's, the
// sweep's sizes, the devices and the settings to vary.
type matrixFlags struct {
	run         runFlags
	sizes       string
	dev         string
	remoteDev   string
	remoteNetns string
	sets        []string
	keep        bool
	settle      time.Duration
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

Settings are made in a safe order (MTU, then features turned on, then off)
and checked afterwards: a combination the kernel cannot hold (tso on with
tx-checksumming off: TSO needs it) is skipped and said so, and features the
kernel moved on its own are named below the table.

Every device is put back exactly as it was when the matrix ends, however it
ends: normally, on an error, on Ctrl-C or SIGTERM (restored at once, then
the partial table), or on a panic. --keep leaves the last row's settings.
A server changes its own device only when started with --allow-netconf and
--psk-file, and this client proves the key (--psk-file); it restores the
device when the session ends, even if this client dies. --remote-netns changes the remote device directly in a
network namespace of this host instead (a lab: wirespeed lab run matrix
does that).

Some NICs reset their link when the MTU or an offload changes; --settle
waits after each change before measuring.`,
		Example: `  wirespeed matrix host --dev eth0 --set tso=on,off --set tx-checksumming=on,off
  wirespeed matrix host --dev eth0 --remote-dev eth1 --set mtu=1500,9000 -I 99,5 -o mtu.json
  wirespeed matrix host --dev eth0 --set gro=on,off --sizes 64,1460,64K -l 5`,
		Args: func(cmd *cobra.Command, args []string) error {
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
			case fl.Changed("tradeoff"):
				return usagef("matrix runs one test per combination; --tradeoff does not apply (run the matrix with -t TCP_STREAM, then -t TCP_MAERTS)")
			}
			return runMatrix(cmd.Context(), e, f, target, fl.Changed("port"), fl.Changed("sizes"))
		},
	}
	addRunFlags(cmd, &f.run)
	fl := cmd.Flags()
	fl.StringVar(&f.dev, "dev", "", "this host's interface to change (the one that carries the test)")
	fl.StringVar(&f.remoteDev, "remote-dev", "", "the server's interface to change too (the server needs --allow-netconf and --psk-file, this client --psk-file)")
	fl.StringVar(&f.remoteNetns, "remote-netns", "", "change --remote-dev in this network namespace of this host instead of asking the server (a lab's side a)")
	fl.StringArrayVar(&f.sets, "set", nil, "NAME=VALUE,VALUE... to vary, e.g. tso=on,off or mtu=1500,9000; repeat for more (local: or remote: prefix for one side)")
	fl.StringVar(&f.sizes, "sizes", "", "run a sweep of these message sizes for every combination (as wirespeed sweep --sizes)")
	fl.BoolVar(&f.keep, "keep", false, "leave the last combination's settings in place instead of restoring them")
	fl.DurationVar(&f.settle, "settle", time.Second, "wait this long after changing settings before measuring (NICs that reset their link need a few seconds)")
	return cmd
}

// parseDimensions reads the --set flags: each NAME=V1,V2,... with an
// optional local: or remote: prefix. Every value is checked as a setting.
func parseDimensions(sets []string) ([]run.MatrixDimension, error) {
	var dims []run.MatrixDimension
	n := 1
	for _, s := range sets {
		var d run.MatrixDimension
		body := strings.TrimSpace(s)
		if p, rest, ok := strings.Cut(body, ":"); ok && (p == "local" || p == "remote") {
			d.Side, body = run.Side(p), rest
		}
		name, vals, ok := strings.Cut(body, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" || strings.TrimSpace(vals) == "" {
			return nil, usagef("--set %q: write NAME=VALUE,VALUE..., like tso=on,off or mtu=1500,9000", s)
		}
		d.Name = name
		for _, v := range strings.Split(vals, ",") {
			st, err := netconf.ParseSetting(name + "=" + strings.TrimSpace(v))
			if err != nil {
				return nil, usagef("--set %q: %v", s, err)
			}
			val := strconv.Itoa(st.MTU)
			if name != "mtu" {
				val = onOffWord(st.On)
			}
			if slices.Contains(d.Values, val) {
				return nil, usagef("--set %q names %s twice", s, val)
			}
			d.Values = append(d.Values, val)
		}
		for _, o := range dims {
			if o.Name == d.Name && (o.Side == d.Side || o.Side == "" || d.Side == "") {
				return nil, usagef("--set %q: %s is already varied by another --set", s, d.Key())
			}
		}
		n *= len(d.Values)
		if n > maxCombinations {
			return nil, usagef("the --set flags make more than %d combinations; vary fewer settings at once", maxCombinations)
		}
		dims = append(dims, d)
	}
	return dims, nil
}

func onOffWord(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// combinations returns every combination of the dimensions' values, the
// last dimension varying fastest.
func combinations(dims []run.MatrixDimension) [][]run.MatrixSetting {
	out := [][]run.MatrixSetting{{}}
	for _, d := range dims {
		var next [][]run.MatrixSetting
		for _, c := range out {
			for _, v := range d.Values {
				row := append(slices.Clip(c), run.MatrixSetting{Name: d.Name, Side: d.Side, Value: v})
				next = append(next, row)
			}
		}
		out = next
	}
	return out
}

// settingsFor returns the settings of a row that apply to side, in the
// order they are made: the MTU first, then features turned on, then
// features turned off. Turning features on first means a feature that
// another one depends on (tx checksumming, for TSO) is on before the
// dependent one is asked for.
func settingsFor(row []run.MatrixSetting, side run.Side) []netconf.Setting {
	var mtu, on, off []netconf.Setting
	for _, s := range row {
		if s.Side != "" && s.Side != side {
			continue
		}
		st, err := netconf.ParseSetting(s.Name + "=" + s.Value)
		if err != nil {
			continue // parseDimensions checked every value
		}
		switch {
		case s.Name == "mtu":
			mtu = append(mtu, st)
		case st.On:
			on = append(on, st)
		default:
			off = append(off, st)
		}
	}
	return append(append(mtu, on...), off...)
}

// changer changes one side's device for a matrix.
type changer interface {
	side() run.Side
	device() run.MatrixDevice
	// check says whether every setting could be made, changing nothing.
	check(ctx context.Context, settings []netconf.Setting) error
	// set makes the settings and checks they hold; it returns what it
	// changed even when it fails.
	set(ctx context.Context, settings []netconf.Setting) ([]run.SettingChange, error)
	// finish restores the device, or leaves it (keep). Only the first
	// call of finish and abandon does anything.
	finish(ctx context.Context, keep bool) error
	// abandon restores at once, even with keep; any goroutine may call it.
	abandon()
}

// localChanger changes a device of this host, in the client's network
// namespace or a named one.
type localChanger struct {
	sd  run.Side
	dev run.MatrixDevice
	ns  *netconf.Session
}

func openLocal(e *env, sd run.Side, dev, nsName string, keep bool) (*localChanger, error) {
	opts := netconf.Options{Dev: dev, Keep: keep, Log: e.log}
	md := run.MatrixDevice{Dev: dev, Via: "local"}
	if nsName != "" {
		h, err := netns.GetFromName(nsName)
		if err != nil {
			return nil, fmt.Errorf("network namespace %s: %w", nsName, err)
		}
		defer h.Close() // netconf opens its sockets inside during Open
		opts.Netns, opts.NetnsName = h, nsName
		md.Netns, md.Via = nsName, "netns"
	}
	ns, err := netconf.Open(opts)
	if err != nil {
		return nil, labErr(err)
	}
	return &localChanger{sd: sd, dev: md, ns: ns}, nil
}

func (l *localChanger) side() run.Side           { return l.sd }
func (l *localChanger) device() run.MatrixDevice { return l.dev }

func (l *localChanger) check(_ context.Context, settings []netconf.Setting) error {
	return l.ns.Check(settings...)
}

func (l *localChanger) set(_ context.Context, settings []netconf.Setting) ([]run.SettingChange, error) {
	before := len(l.ns.Changes())
	err := l.ns.Set(settings...)
	if err == nil {
		err = l.ns.Verify(settings...)
	}
	return l.ns.Changes()[before:], err
}

func (l *localChanger) finish(_ context.Context, keep bool) error {
	if keep {
		return l.ns.Restore() // opened with Keep: leaves the settings
	}
	return l.ns.RestoreNow()
}

func (l *localChanger) abandon() { l.ns.RestoreNow() }

// remoteChanger asks the server to change its device over the control
// connection. The server restores it when the session ends, whatever
// happens to this client, so abandon has nothing to do.
type remoteChanger struct {
	c   *client.Client
	dev string
}

func (r *remoteChanger) side() run.Side { return run.Remote }
func (r *remoteChanger) device() run.MatrixDevice {
	return run.MatrixDevice{Dev: r.dev, Via: "server"}
}

func (r *remoteChanger) check(ctx context.Context, settings []netconf.Setting) error {
	_, err := r.c.Netconf(ctx, control.NetconfCheck, r.dev, settingStrings(settings))
	return err
}

func (r *remoteChanger) set(ctx context.Context, settings []netconf.Setting) ([]run.SettingChange, error) {
	reply, err := r.c.Netconf(ctx, control.NetconfSet, r.dev, settingStrings(settings))
	return reply.Changes, err
}

func (r *remoteChanger) finish(ctx context.Context, keep bool) error {
	action := control.NetconfRestore
	if keep {
		action = control.NetconfKeep
	}
	// After an interrupt too: the restore is what the interrupt wants.
	_, err := r.c.Netconf(context.WithoutCancel(ctx), action, r.dev, nil)
	return err
}

func (r *remoteChanger) abandon() {}

func settingStrings(ss []netconf.Setting) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.String()
	}
	return out
}

func runMatrix(ctx context.Context, e *env, f *matrixFlags, target string, portSet, sizesSet bool) error {
	base, err := f.run.buildSpec()
	if err != nil {
		return err
	}
	rep, err := f.run.measure.repeat()
	if err != nil {
		return err
	}
	var sizes []int
	if sizesSet {
		if sizes, err = spec.ParseSizes(f.sizes); err != nil {
			return usageError{err}
		}
	}
	dims, err := parseDimensions(f.sets)
	if err != nil {
		return err
	}
	switch {
	case len(dims) == 0:
		return usagef("matrix needs at least one --set, like --set tso=on,off")
	case f.dev == "" && f.remoteDev == "":
		return usagef("matrix needs the interface to change: --dev IFACE (this host), --remote-dev IFACE (the server's), or both")
	case f.remoteNetns != "" && f.remoteDev == "":
		return usagef("--remote-netns names where --remote-dev is; give --remote-dev too")
	}
	for _, d := range dims {
		if d.Side == run.Local && f.dev == "" {
			return usagef("--set %s=...: give --dev, the local interface", d.Key())
		}
		if d.Side == run.Remote && f.remoteDev == "" {
			return usagef("--set %s=...: give --remote-dev, the server's interface", d.Key())
		}
	}
	c, err := connect(ctx, e, &f.run, target, portSet, base.IPVersion, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	addr, label := c.addr, c.label

	m := &matrixRun{e: e, f: f, c: c.Client, base: base, rep: rep, sizes: sizes, dims: dims, addr: addr}
	if err := m.open(); err != nil {
		return err
	}
	return m.run(ctx, label)
}

// matrixRun is one matrix: its changers, its document, its output.
type matrixRun struct {
	e        *env
	f        *matrixFlags
	c        *client.Client
	base     spec.Test
	rep      spec.Repeat
	sizes    []int
	dims     []run.MatrixDimension
	addr     string
	changers []changer
	doc      *run.Document
}

// open opens the devices to change. From here on, run restores them on
// every path out; when opening one fails, open restores the others.
func (m *matrixRun) open() error {
	if m.f.dev != "" {
		lc, err := openLocal(m.e, run.Local, m.f.dev, "", m.f.keep)
		if err != nil {
			return err
		}
		m.changers = append(m.changers, lc)
	}
	if m.f.remoteDev != "" {
		if m.f.remoteNetns != "" {
			lc, err := openLocal(m.e, run.Remote, m.f.remoteDev, m.f.remoteNetns, m.f.keep)
			if err != nil {
				m.abandon()
				return err
			}
			m.changers = append(m.changers, lc)
		} else {
			m.changers = append(m.changers, &remoteChanger{c: m.c, dev: m.f.remoteDev})
		}
	}
	return nil
}

// run checks the settings, measures every combination and restores the
// devices, however it ends.
func (m *matrixRun) run(ctx context.Context, label string) error {
	// A panic restores, then goes on. A signal (Ctrl-C, SIGTERM) cancels
	// ctx: the devices are restored at once, before the interrupted run
	// even returns, so that a second signal, which ends the process,
	// finds them restored. netconf's RestoreOnSignal is not used: it
	// would end the process before the partial table is shown.
	defer func() {
		if p := recover(); p != nil {
			m.abandon()
			panic(p)
		}
	}()
	stopAbandon := context.AfterFunc(ctx, m.abandon)
	defer stopAbandon()

	mx := &run.Matrix{Dimensions: m.dims, Rows: []run.MatrixRow{}, Keep: m.f.keep}
	for _, ch := range m.changers {
		d := ch.device()
		if ch.side() == run.Local {
			mx.Local = &d
		} else {
			mx.Remote = &d
		}
	}
	m.doc = &run.Document{
		Schema:  run.Schema,
		Tool:    tool(),
		Command: "matrix",
		Result:  run.Result{Spec: m.base, Intervals: []run.Interval{}, Directions: []run.DirectionResult{}, Streams: []run.Stream{}},
		Sizes:   m.sizes,
		Matrix:  mx,
	}
	r := m.rep
	m.doc.Repeat = &r

	runErr := m.check(ctx)
	if runErr == nil {
		runErr = m.rows(ctx, label)
	}
	// Restore (or keep), whatever happened above.
	for _, ch := range m.changers {
		keep := m.f.keep && ctx.Err() == nil && runErr == nil
		if err := ch.finish(ctx, keep); err != nil {
			mx.RestoreErrors = append(mx.RestoreErrors, fmt.Sprintf("%s: %v", ch.device().Dev, err))
		}
	}
	mx.Keep = m.f.keep && len(mx.RestoreErrors) == 0 && ctx.Err() == nil && runErr == nil
	return m.finish(runErr)
}

// abandon restores every device now (a signal or a panic).
func (m *matrixRun) abandon() {
	for _, ch := range m.changers {
		ch.abandon()
	}
}

// check checks every value of every setting on every device it applies
// to, before anything changes.
func (m *matrixRun) check(ctx context.Context) error {
	var errs []error
	for _, ch := range m.changers {
		var all []netconf.Setting
		for _, d := range m.dims {
			if d.Side != "" && d.Side != ch.side() {
				continue
			}
			for _, v := range d.Values {
				st, _ := netconf.ParseSetting(d.Name + "=" + v)
				all = append(all, st)
			}
		}
		if err := ch.check(ctx, all); err != nil {
			if control.HasCode(err, control.CodeForbidden) {
				return fmt.Errorf("%w; or run the matrix with --dev only", err)
			}
			errs = append(errs, fmt.Errorf("%s (%s): %w", ch.device().Dev, ch.side(), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cannot make these settings, nothing was changed: %w", err)
	}
	return nil
}

// rows measures every combination in order, writing each row as it
// finishes and saving the document after each.
func (m *matrixRun) rows(ctx context.Context, label string) error {
	text := !m.f.run.json
	combos := combinations(m.dims)
	table := report.NewMatrixTable(m.doc.Matrix, len(m.sizes) > 0, m.base.Kind.RR(), m.rep.ConfidenceLevel)
	if text {
		first := m.base
		if len(m.sizes) > 0 {
			first = sweep.AtSize(m.base, m.sizes[0])
		}
		report.Heading(m.e.stdout, first, label)
		if len(m.sizes) > 0 {
			fmt.Fprintf(m.e.stdout, "sweep of message sizes %s for every combination\n", sweep.FormatSizes(m.sizes))
		}
		report.MatrixHeading(m.e.stdout, m.doc.Matrix)
		fmt.Fprintln(m.e.stdout)
		table.Header(m.e.stdout)
	}
	measured := 0
	for i, combo := range combos {
		if ctx.Err() != nil {
			m.doc.Interrupted = true
			break
		}
		row := run.MatrixRow{Index: i + 1, Label: run.RowLabel(combo), Settings: combo, Points: []run.Point{}}
		progress := m.progress(i, len(combos), row.Label)
		skip, err := m.apply(ctx, &row)
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
			if err := m.measure(ctx, &row, progress); err != nil {
				m.addRow(row)
				return err
			}
			measured++
		} else {
			row.Skipped = skip
		}
		m.addRow(row)
		if text {
			table.Row(m.e.stdout, row)
		}
		if err := m.save(); err != nil {
			return err
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
// ends the matrix (the control connection failed).
func (m *matrixRun) apply(ctx context.Context, row *run.MatrixRow) (string, error) {
	var skips []string
	for _, ch := range m.changers {
		settings := settingsFor(row.Settings, ch.side())
		if len(settings) == 0 {
			continue
		}
		changes, err := ch.set(ctx, settings)
		row.Changes = append(row.Changes, changes...)
		if err != nil {
			// The server's refusal or failure is a row skipped; a lost
			// control connection ends the matrix.
			var re *control.RemoteError
			if _, remote := ch.(*remoteChanger); remote && !errors.As(err, &re) {
				return "", fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
			}
			skips = append(skips, err.Error()) // names the device
		}
	}
	if len(skips) > 0 {
		return strings.Join(skips, "; "), nil
	}
	if _, err := m.c.RefreshEnv(ctx); err != nil {
		return "", fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
	}
	if m.f.settle > 0 {
		select {
		case <-time.After(m.f.settle):
		case <-ctx.Done():
		}
	}
	return "", nil
}

// measure runs a row's point, or its sweep.
func (m *matrixRun) measure(ctx context.Context, row *run.MatrixRow, progress func(iterate.Event)) error {
	measureOnce := func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (run.Result, error) {
		res, err := m.c.Iterate(ctx, t, rep, p)
		res.Remote.Address = m.addr
		return res, err
	}
	if len(m.sizes) == 0 {
		res, err := measureOnce(ctx, m.base, m.rep, progress)
		if err != nil && len(res.Directions) == 0 {
			return fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
		}
		size := m.base.SendSize
		if m.base.Kind.RR() {
			size = m.base.RequestSize
		}
		row.Points = []run.Point{{MsgSize: size, Result: res}}
		row.Interrupted = res.Interrupted || ctx.Err() != nil
		if err != nil {
			return fmt.Errorf("row %d (%s): %w", row.Index, row.Label, err)
		}
		return nil
	}
	doc, err := sweep.Run(ctx, sweep.Plan{Base: m.base, Repeat: m.rep, Sizes: m.sizes},
		sweep.Options{Measure: func(ctx context.Context, t spec.Test, rep spec.Repeat, _ func(iterate.Event)) (run.Result, error) {
			return measureOnce(ctx, t, rep, progress)
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
func (m *matrixRun) addRow(row run.MatrixRow) {
	mx := m.doc.Matrix
	mx.Rows = append(mx.Rows, row)
	if len(m.doc.Directions) == 0 && len(row.Points) > 0 {
		interrupted := m.doc.Interrupted
		m.doc.Result = row.Points[0].Result
		m.doc.Interrupted = interrupted
	}
}

// progress returns the iteration events' handler of row i: a line on
// stderr as each iteration ends.
func (m *matrixRun) progress(i, n int, label string) func(iterate.Event) {
	w := m.e.stderr
	return func(ev iterate.Event) {
		if !ev.Done {
			return
		}
		fmt.Fprintf(w, "matrix: row %d of %d (%s): %s\n",
			i+1, n, label, report.IterationLine(ev.Iteration, ev.Max, ev.Result, ev.Confidence))
	}
}

// save writes the document to -o, when given.
func (m *matrixRun) save() error {
	if m.f.run.output == "" {
		return nil
	}
	return report.WriteFile(m.f.run.output, *m.doc, func(w io.Writer) {
		report.Heading(w, m.doc.Spec, m.addr)
		report.MatrixTableOf(w, *m.doc)
	})
}

// finish writes the notes, the JSON, the file, and returns the command's
// error.
func (m *matrixRun) finish(runErr error) error {
	doc := *m.doc
	switch {
	case m.f.run.json:
		if err := report.JSON(m.e.stdout, doc); err != nil {
			return err
		}
	case len(doc.Matrix.Rows) > 0 || len(doc.Matrix.RestoreErrors) > 0:
		report.MatrixNotes(m.e.stdout, doc)
	}
	if err := m.save(); err != nil && runErr == nil {
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
		return errInterrupted
	}
	return nil
}
