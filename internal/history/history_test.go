package history

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
	"wirespeed/internal/record"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/archive"
	"wirespeed/internal/result"
	"wirespeed/internal/sysinfo"
)

var t0 = time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)

// archived writes synthetic results to a new SQLite archive and reads
// them back: history is built from what the archive returns.
func archived(t *testing.T, docs []archive.Synthetic) ([]archive.Row, map[int64]archive.Env) {
	t.Helper()
	ctx := context.Background()
	a, err := archive.Open(ctx, archive.Target{Backend: archive.SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, d := range docs {
		if _, err := a.Put(ctx, d.Document()); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := a.Results(ctx, archive.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.EnvID)
	}
	envs, err := a.Envs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	return rows, envs
}

// tsoSeries: 12 results near 941 Mbit/s with TSO on at B, then 8 near
// 612 with it off.
func tsoSeries(after int) []archive.Synthetic {
	rng := rand.New(rand.NewPCG(1, 1))
	var docs []archive.Synthetic
	for i := 0; i < 12+after; i++ {
		d := archive.Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: 941e6 + 3e6*rng.NormFloat64(), TSO: true}
		if i >= 12 {
			d.BitsPerSecond, d.TSO = 612e6+3e6*rng.NormFloat64(), false
		}
		docs = append(docs, d)
	}
	// Another series (another size) that does not change.
	for i := 0; i < 10; i++ {
		docs = append(docs, archive.Synthetic{Source: "A", Destination: "B", SendSize: 1460, Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: 300e6 + 3e6*rng.NormFloat64(), TSO: true})
	}
	return docs
}

func TestChangeWithEnvironment(t *testing.T) {
	rows, envs := archived(t, tsoSeries(8))
	series := Build(rows, Figures[0])
	if len(series) != 2 {
		t.Fatalf("%d series, want 2", len(series))
	}
	s := series[0]
	if s.Key.MsgSize != 131072 || len(s.Points) != 20 {
		t.Fatalf("first series %+v with %d points", s.Key, len(s.Points))
	}
	if err := s.FindChanges(Options{Alpha: 0.01}, envs); err != nil {
		t.Fatal(err)
	}
	if len(s.Changes) != 1 {
		t.Fatalf("changes %+v, want one", s.Changes)
	}
	c := s.Changes[0]
	if c.Index != 12 || !c.Time.Equal(t0.Add(12*time.Hour)) || !c.Worse || c.ChangePct > -33 || c.ChangePct < -37 || c.P > 0.01 {
		t.Errorf("change %+v; want at 12, about -35%%, worse", c)
	}
	if len(c.Env) != 1 || c.Env[0] != (EnvChange{Host: "B", Side: "remote", Name: "tso", Before: "on", After: "off"}) {
		t.Errorf("environment change %+v; want B tso on -> off", c.Env)
	}
	other := series[1]
	if err := other.FindChanges(Options{Alpha: 0.01}, envs); err != nil || len(other.Changes) != 0 {
		t.Errorf("steady series: changes %+v, %v; want none", other.Changes, err)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		after     int
		tolerance float64
		want      bool
	}{
		{"steady", 0, 0, false},
		{"one slow point", 1, 0.02, true},
		{"slow but tolerated", 1, 0.40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, envs := archived(t, tsoSeries(tc.after))
			s := Build(rows, Figures[0])[0]
			s.FindChanges(Options{Alpha: 0.01}, envs)
			v, err := Check(s, CheckOptions{Tolerance: tc.tolerance}, envs)
			if err != nil {
				t.Fatal(err)
			}
			if v.Regression != tc.want {
				t.Errorf("regression %v, want %v: %+v", v.Regression, tc.want, v)
			}
			if tc.after == 1 && (len(v.Env) != 1 || v.Env[0].Name != "tso") {
				t.Errorf("environment change %+v; want tso", v.Env)
			}
		})
	}
	// Lower is better: a latency that fell is no regression.
	rows, envs := archived(t, tsoSeries(1))
	s := Build(rows, Figures[0])[0]
	s.HigherIsBetter = false
	if v, err := Check(s, CheckOptions{}, envs); err != nil || v.Regression {
		t.Errorf("a figure that fell, lower being better: %+v, %v; want no regression", v, err)
	}
	if _, err := Check(Series{Points: s.Points[:3]}, CheckOptions{}, envs); err == nil {
		t.Error("three points: want an error (too few before the newest)")
	}
}

// TestChangeNamesEnvironment: a series that falls when one item of the
// destination's environment changes, for each item a change note must
// name (the list: kernel, driver, offload features, MTU, qdisc,
// congestion control, CPU governor, the peer's host). The note names
// that item, with its values on either side, and nothing else.
func TestChangeNamesEnvironment(t *testing.T) {
	set := func(f func(e *sysinfo.Env, after bool)) func(after bool) func(*sysinfo.Env) {
		return func(after bool) func(*sysinfo.Env) { return func(e *sysinfo.Env) { f(e, after) } }
	}
	pick := func(after bool, before, now string) string {
		if after {
			return now
		}
		return before
	}
	governors := func(g string) *sysinfo.CPUFreq {
		return &sysinfo.CPUFreq{Available: true, Driver: "acpi-cpufreq", Governors: map[int]string{0: g, 1: g}}
	}
	for _, tc := range []struct {
		name string
		env  func(after bool) func(*sysinfo.Env)
		mesh bool
		want EnvChange
	}{
		{"kernel", set(func(e *sysinfo.Env, after bool) { e.KernelRelease = pick(after, "6.12.0", "6.13.0-rc1") }), false,
			EnvChange{Name: "kernel", Before: "6.12.0", After: "6.13.0-rc1"}},
		{"driver", set(func(e *sysinfo.Env, after bool) { e.Interface.Driver = pick(after, "ixgbe", "ice") }), false,
			EnvChange{Name: "driver", Before: "ixgbe", After: "ice"}},
		{"offload", set(func(e *sysinfo.Env, after bool) { e.Interface.Offloads[0].On = !after }), false,
			EnvChange{Name: "tso", Before: "on", After: "off"}},
		{"mtu", set(func(e *sysinfo.Env, after bool) {
			if after {
				e.Interface.MTU = 9000
			}
		}), false, EnvChange{Name: "mtu", Before: "1500", After: "9000"}},
		{"qdisc", set(func(e *sysinfo.Env, after bool) {
			if after {
				e.Interface.Qdisc = &sysinfo.Qdisc{Kind: "tbf", RateBitsPerSecond: 650e6}
			}
		}), false, EnvChange{Name: "qdisc", Before: "noqueue", After: "tbf rate_bps=650000000"}},
		{"congestion control", set(func(e *sysinfo.Env, after bool) { e.CongestionControl.Default = pick(after, "cubic", "reno") }), false,
			EnvChange{Name: "cc", Before: "cubic", After: "reno"}},
		{"cpu governor", set(func(e *sysinfo.Env, after bool) { e.CPUFreq = governors(pick(after, "performance", "powersave")) }), false,
			EnvChange{Name: "governor", Before: "performance", After: "powersave"}},
		// A mesh names its peers; another machine answering as B (its
		// hostname in the record) is a change of the peer's host.
		{"peer's host", set(func(e *sysinfo.Env, after bool) { e.Hostname = pick(after, "b-rack1", "b-rack7") }), true,
			EnvChange{Name: "host", Before: "b-rack1", After: "b-rack7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 3))
			var docs []any
			for i := range 20 {
				after := i >= 12
				s := archive.Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(i) * time.Hour),
					BitsPerSecond: 941e6 + 3e6*rng.NormFloat64(), TSO: true, Remote: tc.env(after)}
				if after {
					s.BitsPerSecond -= 329e6
				}
				d := s.Document()
				if !tc.mesh {
					docs = append(docs, d)
					continue
				}
				docs = append(docs, result.MeshDocument{Schema: result.MeshSchema, Tool: d.Tool, Command: "mesh", Spec: d.Spec, Started: d.Started,
					Pairs: []result.MeshPair{{Source: "A", Destination: "B", Via: result.ViaDirect, Result: &d.Result}}})
			}
			rows, envs := archivedDocs(t, docs)
			series := Build(rows, Figures[0])
			if len(series) != 1 {
				t.Fatalf("%d series, want 1", len(series))
			}
			s := series[0]
			if err := s.FindChanges(Options{Alpha: 0.01}, envs); err != nil {
				t.Fatal(err)
			}
			if len(s.Changes) != 1 || s.Changes[0].Index != 12 {
				t.Fatalf("changes %+v, want one at 12", s.Changes)
			}
			want := tc.want
			want.Host, want.Side = "B", "remote"
			if diff := cmp.Diff([]EnvChange{want}, s.Changes[0].Env); diff != "" {
				t.Errorf("environment change (-want +got):\n%s", diff)
			}
		})
	}
}

// archivedDocs is archived for documents of any kind (results
// documents, mesh rounds).
func archivedDocs(t *testing.T, docs []any) ([]archive.Row, map[int64]archive.Env) {
	t.Helper()
	ctx := context.Background()
	a, err := archive.Open(ctx, archive.Target{Backend: archive.SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, d := range docs {
		b, _ := json.Marshal(d)
		if _, err := a.PutJSON(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := a.Results(ctx, archive.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.EnvID)
	}
	envs, err := a.Envs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	return rows, envs
}

// TestEnvSteps: every change of the environment between consecutive
// points is a step, at the first point after it, whether the figure
// moved there (B's TSO) or not (A's kernel, on the client's side).
func TestEnvSteps(t *testing.T) {
	var docs []archive.Synthetic
	for i := range 12 {
		d := archive.Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: 941e6 + float64(i%2)*1e6, TSO: true}
		if i >= 3 {
			d.Kernel = "6.13.0"
		}
		if i >= 7 {
			d.BitsPerSecond, d.TSO = 612e6+float64(i%2)*1e6, false
		}
		docs = append(docs, d)
	}
	rows, envs := archived(t, docs)
	s := Build(rows, Figures[0])[0]
	if err := s.FindChanges(Options{Alpha: 0.01, Permutations: 199}, envs); err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 2 {
		t.Fatalf("steps %+v, want two", s.Steps)
	}
	// The synthetic kernel is both sides'.
	want := []EnvStep{
		{Index: 3, Time: t0.Add(3 * time.Hour), Env: []EnvChange{
			{Host: "A", Side: "local", Name: "kernel", Before: "6.12.0", After: "6.13.0"},
			{Host: "B", Side: "remote", Name: "kernel", Before: "6.12.0", After: "6.13.0"}}},
		{Index: 7, Time: t0.Add(7 * time.Hour), Env: []EnvChange{{Host: "B", Side: "remote", Name: "tso", Before: "on", After: "off"}}},
	}
	if d := cmp.Diff(want, s.Steps); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if len(s.Changes) != 1 || s.Changes[0].Index != 7 {
		t.Errorf("changes %+v, want one at 7", s.Changes)
	}
}

// TestLatencyInterval: a p50 latency that is a mean over iterations
// gets their Student's t interval at -I's default level, 99%: for 10,
// 12 and 14 us, 12 ± t(0.995, 2) 9.925 * 2 / sqrt(3) = 12 ± 11.46.
func TestLatencyInterval(t *testing.T) {
	p50 := record.Values{record.LatencyP50.Name: 12}
	rows := []archive.Row{{Series: "s", Started: t0, Figures: p50, Iterations: 3, IterLatencyP50: []float64{10, 12, 14}},
		{Series: "s", Started: t0.Add(time.Hour), Figures: p50, Iterations: 1}}
	f, _ := FigureNamed("p50")
	s := Build(rows, f)[0]
	p := s.Points[0]
	if p.Lo == nil || p.Hi == nil {
		t.Fatal("a p50 of 3 iterations has no interval")
	}
	if math.Abs(*p.Lo-0.54) > 0.01 || math.Abs(*p.Hi-23.46) > 0.01 {
		t.Errorf("interval %.3f - %.3f, want 0.54 - 23.46", *p.Lo, *p.Hi)
	}
	if s.Points[1].Lo != nil {
		t.Errorf("a point of one iteration has an interval from %v", *s.Points[1].Lo)
	}
}

func TestPanels(t *testing.T) {
	for test, want := range map[string]string{
		"TCP_STREAM": "[[throughput] [rtt]]", "TCP_MAERTS": "[[throughput] [rtt]]",
		"TCP_RR": "[[p50 p90 p99] [throughput]]", "RRUL": "[[throughput] [p50 p90 p99]]",
		"UDP_STREAM": "[[throughput] [loss]]",
	} {
		var names [][]string
		for _, p := range Panels(test) {
			var n []string
			for _, f := range p {
				n = append(n, f.Label)
			}
			names = append(names, n)
		}
		if got := fmt.Sprint(names); got != want {
			t.Errorf("%s: panels %s, want %s", test, got, want)
		}
		if Panels(test)[0][0].Name != DefaultFigure(test).Name {
			t.Errorf("%s: the first panel's first figure is not the default figure %s", test, DefaultFigure(test).Name)
		}
	}
}
