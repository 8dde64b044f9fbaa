package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/iterate"
	"wirespeed/internal/netconf"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

func testSpec() spec.Test {
	sp := spec.Default()
	sp.Duration = 100 * time.Millisecond
	sp.Interval = 0
	return sp
}

// countMeasure measures nothing: throughput is the message size in
// Mbit/s; it counts its calls.
func countMeasure(n *int) func(context.Context, spec.Test, spec.Repeat, func(iterate.Event)) (result.Result, error) {
	return func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
		*n++
		s := result.Summary{BitsPerSecond: float64(t.SendSize) * 1e6, ElapsedS: 1}
		res := result.Result{Spec: t, Summary: s, Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Summary: s}}}
		if p != nil {
			p(iterate.Event{Iteration: 1, Max: 1, Done: true, Result: res, Stop: true})
		}
		return res, nil
	}
}

func TestParseDimensions(t *testing.T) {
	on, off := true, false
	feat := func(name string, vals ...bool) []netconf.Setting {
		var out []netconf.Setting
		for _, v := range vals {
			out = append(out, netconf.Feature(name, v))
		}
		return out
	}
	tests := []struct {
		name    string
		sets    []string
		want    []Dimension
		wantErr string
	}{
		{name: "features and mtu", sets: []string{"tso=on,off", "TX-Checksumming=ON,false", "mtu=1500, 9000"}, want: []Dimension{
			{Name: "tso", Values: feat("tso", on, off)},
			{Name: "tx-checksumming", Values: feat("tx-checksumming", on, off)},
			{Name: "mtu", Values: []netconf.Setting{netconf.MTU(1500), netconf.MTU(9000)}},
		}},
		{name: "sides", sets: []string{"remote:gro=on,off", "local:gro=off"}, want: []Dimension{
			{Name: "gro", Side: result.Remote, Values: feat("gro", on, off)},
			{Name: "gro", Side: result.Local, Values: feat("gro", off)},
		}},
		{name: "none", wantErr: "at least one --set"},
		{name: "no values", sets: []string{"tso"}, wantErr: "NAME=VALUE,VALUE"},
		{name: "bad value", sets: []string{"tso=on,maybe"}, wantErr: "on or off"},
		{name: "bad mtu", sets: []string{"mtu=1500,jumbo"}, wantErr: "MTU"},
		{name: "twice", sets: []string{"tso=on,off", "tso=off"}, wantErr: "already varied"},
		{name: "both and one side", sets: []string{"tso=on,off", "remote:tso=off"}, wantErr: "already varied"},
		{name: "value twice", sets: []string{"tso=on,true"}, wantErr: "names on twice"},
		{name: "direction", sets: []string{"direction=stream,MAERTS,tcp_bidir", "tso=on,off"}, want: []Dimension{
			{Name: Direction, Tests: []spec.Kind{spec.TCPStream, spec.TCPMaerts, spec.TCPBidir}},
			{Name: "tso", Values: feat("tso", on, off)},
		}},
		{name: "direction as test", sets: []string{"test=maerts"}, want: []Dimension{{Name: Direction, Tests: []spec.Kind{spec.TCPMaerts}}}},
		{name: "direction of one side", sets: []string{"remote:direction=stream"}, wantErr: "not one side's"},
		{name: "bad direction", sets: []string{"direction=stream,up"}, wantErr: `"up" is not a direction`},
		{name: "direction twice", sets: []string{"direction=stream,tcp_stream"}, wantErr: "names TCP_STREAM twice"},
		{name: "too many", sets: []string{"mtu=1000,1100,1200,1300,1400,1500,1600,1700", "tso=on,off", "gso=on,off", "gro=on,off", "sg=on,off", "rx=on,off", "tx=on,off"}, wantErr: "more than 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDimensions(tt.sets)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCombinations(t *testing.T) {
	dims, err := ParseDimensions([]string{"tso=on,off", "remote:mtu=1500,9000"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range Combinations(dims) {
		got = append(got, result.RowLabel(rowRecord(c)))
	}
	want := []string{"tso=on remote:mtu=1500", "tso=on remote:mtu=9000", "tso=off remote:mtu=1500", "tso=off remote:mtu=9000"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSettingsOrder: the MTU first, then features turned on, then off,
// and only what applies to the side.
func TestSettingsOrder(t *testing.T) {
	row := []Setting{
		{Setting: netconf.Feature("tso", true)},
		{Setting: netconf.Feature("tx-checksumming", false)},
		{Side: result.Remote, Setting: netconf.Feature("gro", true)},
		{Setting: netconf.MTU(9000)},
	}
	str := func(ss []netconf.Setting) string { return strings.Join(settingStrings(ss), " ") }
	if got, want := str(settingsFor(row, result.Local)), "mtu=9000 tso=on tx-checksumming=off"; got != want {
		t.Errorf("local: %q, want %q", got, want)
	}
	if got, want := str(settingsFor(row, result.Remote)), "mtu=9000 tso=on gro=on tx-checksumming=off"; got != want {
		t.Errorf("remote: %q, want %q", got, want)
	}
}

// fakeChanger records what a matrix asks of a device.
type fakeChanger struct {
	sets      [][]netconf.Setting
	panicAt   int // panic in this set call (1-based); 0 never
	fail      string
	end       bool // fail with an EndError
	finishErr error
	finished  int
	kept      bool
	abandons  atomic.Int32 // abandon may run on another goroutine
}

func (f *fakeChanger) Side() result.Side { return result.Local }
func (f *fakeChanger) Device() result.MatrixDevice {
	return result.MatrixDevice{Dev: "fake0", Via: "local"}
}
func (f *fakeChanger) Check(context.Context, []netconf.Setting) error {
	return nil
}
func (f *fakeChanger) Set(_ context.Context, s []netconf.Setting) ([]netconf.SettingChange, error) {
	f.sets = append(f.sets, s)
	if len(f.sets) == f.panicAt {
		panic("boom")
	}
	for _, st := range s {
		if st.String() == f.fail {
			err := fmt.Errorf("fake0: %s does not hold", st)
			if f.end {
				return nil, &EndError{err}
			}
			return nil, err
		}
	}
	return []netconf.SettingChange{{Device: "fake0", Setting: s[0].String()}}, nil
}
func (f *fakeChanger) Finish(_ context.Context, keep bool) error {
	f.finished++
	f.kept = keep
	return f.finishErr
}
func (f *fakeChanger) Abandon() { f.abandons.Add(1) }

// TestMatrixPanicRestores: a panic in the middle of a matrix restores
// the devices (abandon: even with --keep) and goes on panicking.
func TestMatrixPanicRestores(t *testing.T) {
	fc := &fakeChanger{}
	dims, _ := ParseDimensions([]string{"tso=on,off"})
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{fc}, Keep: true}
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the panic to go on", p)
		}
		if n := fc.abandons.Load(); n != 1 {
			t.Errorf("abandoned %d times, want once", n)
		}
	}()
	fc.panicAt = 1 // in the first row's settings, before any measurement
	measured := 0
	Run(context.Background(), plan, Options{Measure: countMeasure(&measured)})
	t.Fatal("run returned")
}

// TestMatrixSignalRestoresAtOnce: when the command's context ends (the
// CLI's on SIGINT or SIGTERM), the devices are restored at once, not only
// when the matrix has unwound.
func TestMatrixSignalRestoresAtOnce(t *testing.T) {
	fc := &fakeChanger{}
	dims, _ := ParseDimensions([]string{"tso=on,off"})
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{fc}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	measured := 0
	doc, err := Run(ctx, plan, Options{Measure: countMeasure(&measured)})
	if err != nil || !doc.Interrupted || measured != 0 {
		t.Errorf("run = %v, interrupted %v, measured %d; want an interrupted document and nothing measured", err, doc.Interrupted, measured)
	}
	// The restore at once runs on its own goroutine.
	for i := 0; i < 100 && fc.abandons.Load() == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if fc.abandons.Load() != 1 || fc.finished != 1 || fc.kept {
		t.Errorf("abandoned %d, finished %d (keep %v); want restored at once and at the end", fc.abandons.Load(), fc.finished, fc.kept)
	}
}

// rowRecorder is an Observer that keeps the rows' labels and skips.
type rowRecorder struct {
	begun int
	rows  []string
	iters int
}

func (r *rowRecorder) Begin(*result.Document) { r.begun++ }
func (r *rowRecorder) Iteration(i, n int, label string, ev iterate.Event) {
	if ev.Done {
		r.iters++
	}
}
func (r *rowRecorder) Row(row result.MatrixRow) {
	w := row.Label
	if row.Skipped != "" {
		w += " skipped: " + row.Skipped
	}
	r.rows = append(r.rows, w)
}
func (r *rowRecorder) Kept(row result.MatrixRow) { r.rows = append(r.rows, row.Label+" kept") }

// TestRun: every combination in order, the settings made in a safe
// order, a row skipped when a setting does not hold, the document saved
// after each row, and the device restored at the end.
func TestRun(t *testing.T) {
	fc := &fakeChanger{fail: "mtu=9000"}
	dims, _ := ParseDimensions([]string{"tso=on,off", "mtu=1500,9000"})
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{fc}}
	measured, saves := 0, 0
	rec := &rowRecorder{}
	doc, err := Run(context.Background(), plan, Options{Measure: countMeasure(&measured), Observer: rec,
		Save: func(*result.Document) error { saves++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []string{
		"tso=on mtu=1500",
		"tso=on mtu=9000 skipped: fake0: mtu=9000 does not hold",
		"tso=off mtu=1500",
		"tso=off mtu=9000 skipped: fake0: mtu=9000 does not hold",
	}
	if diff := cmp.Diff(wantRows, rec.rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	var sets []string
	for _, s := range fc.sets {
		sets = append(sets, fmt.Sprint(s))
	}
	wantSets := []string{"[mtu=1500 tso=on]", "[mtu=9000 tso=on]", "[mtu=1500 tso=off]", "[mtu=9000 tso=off]"}
	if diff := cmp.Diff(wantSets, sets); diff != "" {
		t.Errorf("settings made (-want +got):\n%s", diff)
	}
	if measured != 2 || rec.iters != 2 || rec.begun != 1 || saves != 4 || fc.finished != 1 || fc.kept {
		t.Errorf("measured %d, iterations shown %d, begun %d, saves %d, finished %d (keep %v)", measured, rec.iters, rec.begun, saves, fc.finished, fc.kept)
	}
	mx := doc.Matrix
	if len(mx.Rows) != 4 || mx.Rows[0].Changes[0].Setting != "mtu=1500" || len(mx.Rows[0].Points) != 1 || mx.Local == nil || mx.Local.Dev != "fake0" || mx.Keep {
		t.Errorf("matrix %+v", mx)
	}
	if doc.Command != "matrix" || doc.Summary.BitsPerSecond != float64(plan.Base.SendSize)*1e6 {
		t.Errorf("the top level does not repeat the first point: %s %v", doc.Command, doc.Summary.BitsPerSecond)
	}
}

// TestRunSweepRows: with sizes, each row is a sweep.
func TestRunSweepRows(t *testing.T) {
	dims, _ := ParseDimensions([]string{"gro=on,off"})
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Sizes: []int{64, 1024}, Dimensions: dims, Changers: []Changer{&fakeChanger{}}}
	measured := 0
	doc, err := Run(context.Background(), plan, Options{Measure: countMeasure(&measured)})
	if err != nil {
		t.Fatal(err)
	}
	if measured != 4 || len(doc.Matrix.Rows) != 2 {
		t.Fatalf("measured %d, rows %d", measured, len(doc.Matrix.Rows))
	}
	for _, r := range doc.Matrix.Rows {
		if len(r.Points) != 2 || r.Points[1].MsgSize != 1024 || r.Points[1].Summary.BitsPerSecond != 1024e6 {
			t.Errorf("row %s: points %+v", r.Label, r.Points)
		}
	}
}

// TestRunKeep: --keep leaves the settings after a matrix that ended
// normally, and says so; a failed restore is listed and keep is off.
func TestRunKeep(t *testing.T) {
	dims, _ := ParseDimensions([]string{"tso=on,off"})
	fc := &fakeChanger{}
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{fc}, Keep: true}
	measured := 0
	doc, err := Run(context.Background(), plan, Options{Measure: countMeasure(&measured)})
	if err != nil || !fc.kept || !doc.Matrix.Keep || len(doc.Matrix.RestoreErrors) != 0 {
		t.Errorf("keep: %v, kept %v, document keep %v", err, fc.kept, doc.Matrix.Keep)
	}
	fc = &fakeChanger{finishErr: errors.New("device gone")}
	plan.Changers = []Changer{fc}
	doc, err = Run(context.Background(), plan, Options{Measure: countMeasure(&measured)})
	if err != nil || doc.Matrix.Keep || strings.Join(doc.Matrix.RestoreErrors, ";") != "fake0: device gone" {
		t.Errorf("failed finish: %v, keep %v, restore errors %q", err, doc.Matrix.Keep, doc.Matrix.RestoreErrors)
	}
}

// TestRunEnds: a device out of reach ends the matrix, restored and not
// kept; a matrix where no row could be measured is an error.
func TestRunEnds(t *testing.T) {
	dims, _ := ParseDimensions([]string{"tso=on,off"})
	fc := &fakeChanger{fail: "tso=on", end: true}
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{fc}, Keep: true}
	measured := 0
	doc, err := Run(context.Background(), plan, Options{Measure: countMeasure(&measured)})
	if err == nil || !strings.Contains(err.Error(), "row 1 (tso=on): fake0: tso=on does not hold") || measured != 0 || fc.finished != 1 || fc.kept || len(doc.Matrix.Rows) != 1 {
		t.Errorf("end: %v, measured %d, finished %d (keep %v), rows %d", err, measured, fc.finished, fc.kept, len(doc.Matrix.Rows))
	}
	dims, _ = ParseDimensions([]string{"tso=on"})
	plan.Dimensions, plan.Changers = dims, []Changer{&fakeChanger{fail: "tso=on"}}
	if _, err := Run(context.Background(), plan, Options{Measure: countMeasure(&measured)}); err == nil || !strings.Contains(err.Error(), "no combination could be measured") {
		t.Errorf("nothing measured: %v", err)
	}
}

// TestRunDirections: the direction is a dimension that changes no device
// but the test each row runs; the other settings still go to the device,
// and the rows carry the test as their setting.
func TestRunDirections(t *testing.T) {
	dims, err := ParseDimensions([]string{"tso=on,off", "direction=stream,maerts"})
	if err != nil {
		t.Fatal(err)
	}
	if !ChangesDevices(dims) || !VariesDirection(dims) {
		t.Errorf("ChangesDevices %v, VariesDirection %v: want both", ChangesDevices(dims), VariesDirection(dims))
	}
	fc := &fakeChanger{}
	var kinds []spec.Kind
	measure := func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
		kinds = append(kinds, t.Kind)
		n := 0
		return countMeasure(&n)(ctx, t, rep, p)
	}
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{fc}}
	doc, err := Run(context.Background(), plan, Options{Measure: measure})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]spec.Kind{spec.TCPStream, spec.TCPMaerts, spec.TCPStream, spec.TCPMaerts}, kinds); diff != "" {
		t.Errorf("tests measured (-want +got):\n%s", diff)
	}
	var labels []string
	for _, r := range doc.Matrix.Rows {
		labels = append(labels, r.Label)
		if got := r.Points[0].Spec.Kind; string(got) != r.Settings[1].Value {
			t.Errorf("row %s measured %s", r.Label, got)
		}
	}
	want := []string{"tso=on direction=TCP_STREAM", "tso=on direction=TCP_MAERTS", "tso=off direction=TCP_STREAM", "tso=off direction=TCP_MAERTS"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	for _, set := range fc.sets {
		for _, st := range set {
			if st.Name != "tso" {
				t.Errorf("the device was asked for %s", st)
			}
		}
	}
	if got := doc.Matrix.Dimensions[1]; got.Key() != "direction" || strings.Join(got.Values, ",") != "TCP_STREAM,TCP_MAERTS" {
		t.Errorf("dimension recorded as %+v", got)
	}

	// Directions alone: no device to change.
	dims, _ = ParseDimensions([]string{"direction=maerts,bidir"})
	kinds = nil
	if ChangesDevices(dims) {
		t.Error("directions alone change a device")
	}
	if _, err := Run(context.Background(), Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims}, Options{Measure: measure}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]spec.Kind{spec.TCPMaerts, spec.TCPBidir}, kinds); diff != "" {
		t.Errorf("tests measured without a device (-want +got):\n%s", diff)
	}
}

// TestNotMeasured: of a 2x2 matrix interrupted in its third row, the rows
// not measured are the third (interrupted) and the fourth (never
// reached); a skipped row was dealt with.
func TestNotMeasured(t *testing.T) {
	dims, err := ParseDimensions([]string{"tso=on,off", "mtu=1500,9000"})
	if err != nil {
		t.Fatal(err)
	}
	pt := []result.Point{{MsgSize: 131072, Result: result.Result{Directions: []result.DirectionResult{{Direction: spec.ClientToServer}}}}}
	doc := &result.Document{Matrix: &result.Matrix{Rows: []result.MatrixRow{
		{Index: 1, Label: "tso=on mtu=1500", Points: pt},
		{Index: 2, Label: "tso=on mtu=9000", Skipped: "the kernel would not take it", Points: []result.Point{}},
		{Index: 3, Label: "tso=off mtu=1500", Interrupted: true, Points: pt},
	}}}
	want := []string{"tso=off mtu=1500", "tso=off mtu=9000"}
	if d := cmp.Diff(want, NotMeasured(dims, doc)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestResume: a matrix interrupted in its third row keeps the two before
// it; resumed, it keeps them as they are (not measured again, not set on
// the device) and measures the third and fourth, each row once, in
// order, and the device restored both times.
func TestResume(t *testing.T) {
	dims, _ := ParseDimensions([]string{"tso=on,off", "mtu=1500,9000"})
	fc := &fakeChanger{}
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{fc}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	measured := 0
	count := countMeasure(&measured)
	interrupting := func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
		res, err := count(ctx, t, rep, p)
		if measured == 3 { // the third row: stopped as Ctrl-C stops it
			cancel()
			res.Interrupted = true
		}
		return res, err
	}
	first, err := Run(ctx, plan, Options{Measure: interrupting})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted || len(first.Matrix.Rows) != 3 || !first.Matrix.Rows[2].Interrupted {
		t.Fatalf("interrupted matrix: interrupted %v, %d rows", first.Interrupted, len(first.Matrix.Rows))
	}
	if left := NotMeasured(dims, first); strings.Join(left, "; ") != "tso=off mtu=1500; tso=off mtu=9000" {
		t.Errorf("not measured: %q", left)
	}
	if fc.finished != 1 {
		t.Errorf("interrupted: device finished %d times", fc.finished)
	}

	// The file as -o wrote it, read back.
	b, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	var prev result.Document
	if err := json.Unmarshal(b, &prev); err != nil {
		t.Fatal(err)
	}
	if diffs := plan.Differences(&prev, "fake0", "", ""); len(diffs) > 0 {
		t.Fatalf("the same plan differs: %q", diffs)
	}
	fc2 := &fakeChanger{}
	plan.Changers, plan.Doc = []Changer{fc2}, &prev
	measured = 0
	rec := &rowRecorder{}
	doc, err := Run(context.Background(), plan, Options{Measure: countMeasure(&measured), Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tso=on mtu=1500 kept", "tso=on mtu=9000 kept", "tso=off mtu=1500", "tso=off mtu=9000"}
	if diff := cmp.Diff(want, rec.rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	var labels []string
	for i, r := range doc.Matrix.Rows {
		labels = append(labels, r.Label)
		if r.Index != i+1 || r.Interrupted || len(r.Points) != 1 {
			t.Errorf("row %d: index %d, interrupted %v, %d points", i+1, r.Index, r.Interrupted, len(r.Points))
		}
	}
	if diff := cmp.Diff([]string{"tso=on mtu=1500", "tso=on mtu=9000", "tso=off mtu=1500", "tso=off mtu=9000"}, labels); diff != "" {
		t.Errorf("every row once, in order (-want +got):\n%s", diff)
	}
	var sets []string
	for _, s := range fc2.sets {
		sets = append(sets, fmt.Sprint(s))
	}
	if diff := cmp.Diff([]string{"[mtu=1500 tso=off]", "[mtu=9000 tso=off]"}, sets); diff != "" {
		t.Errorf("settings made on resuming: only the rows measured (-want +got):\n%s", diff)
	}
	if measured != 2 || doc.Interrupted || fc2.finished != 1 || len(NotMeasured(dims, doc)) != 0 {
		t.Errorf("measured %d, interrupted %v, finished %d, not measured %q", measured, doc.Interrupted, fc2.finished, NotMeasured(dims, doc))
	}
	if doc.Summary.BitsPerSecond != prev.Matrix.Rows[0].Points[0].Summary.BitsPerSecond {
		t.Errorf("the top level is not the first row's point")
	}
}

// TestResumeDifferences: a resumed matrix whose settings differ from the
// file's is refused, each difference named as the flag that sets it.
func TestResumeDifferences(t *testing.T) {
	dims, _ := ParseDimensions([]string{"tso=on,off"})
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{&fakeChanger{}}}
	measured := 0
	prev, err := Run(context.Background(), plan, Options{Measure: countMeasure(&measured)})
	if err != nil {
		t.Fatal(err)
	}
	other := plan
	other.Base.Parallel = 4
	other.Repeat.MaxIterations, other.Repeat.MinIterations = 5, 3
	other.Dimensions, _ = ParseDimensions([]string{"tso=on,off", "gro=on,off"})
	other.Sizes = []int{64, 1024}
	got := strings.Join(other.Differences(prev, "eth1", "eth2", ""), "; ")
	for _, want := range []string{
		"--set tso=on,off in the file, --set tso=on,off --set gro=on,off now",
		"--dev fake0 in the file, eth1 now",
		"--remote-dev none in the file, eth2 now",
		"parallel 1 in the file, 4 now",
		"iterations and confidence --iterations 1,1",
		"sizes none in the file, 64,1024 now",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("differences lack %q:\n%s", want, got)
		}
	}
	// The direction rows vary is not a difference of the test.
	dirs, _ := ParseDimensions([]string{"direction=maerts,stream"})
	dplan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dirs}
	dprev, err := Run(context.Background(), dplan, Options{Measure: countMeasure(&measured)})
	if err != nil {
		t.Fatal(err)
	}
	if d := dplan.Differences(dprev, "", "", ""); len(d) > 0 {
		t.Errorf("a matrix of directions differs from itself: %q", d)
	}
}
