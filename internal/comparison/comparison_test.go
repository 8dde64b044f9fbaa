package comparison

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/sysinfo"
)

// point is a result at size whose iterations have these throughputs
// (bits/s) and local CPU utilizations (%).
func point(size int, bps, util []float64, env *sysinfo.Env) result.Point {
	sp := spec.Default()
	sp.SendSize = size
	r := result.Result{Spec: sp, Directions: []result.DirectionResult{{}}, Remote: result.SideInfo{Env: env}}
	for i := range bps {
		s := result.Summary{BitsPerSecond: bps[i], LocalCPU: &measure.CPU{UtilPct: util[i], ServiceDemandMicrosPerKB: util[i] / 10}}
		r.Iterations = append(r.Iterations, result.Iteration{Index: i + 1, Summary: s})
	}
	r.Summary = result.MeanSummary(func() []result.Summary {
		var ss []result.Summary
		for _, it := range r.Iterations {
			ss = append(ss, it.Summary)
		}
		return ss
	}())
	return result.Point{MsgSize: size, Result: r}
}

func env(mtu int, kernel string) *sysinfo.Env {
	return &sysinfo.Env{KernelRelease: kernel, Interface: &sysinfo.Interface{Name: "wst-a", MTU: mtu}}
}

func sweep(points ...result.Point) result.Document {
	d := result.Document{Schema: result.Schema, Command: "sweep", Points: points}
	d.Result = points[0].Result
	return d
}

// The fixtures, with what the tests must say, worked by hand:
//
// 131072 bytes, 4 iterations each:
//
//	throughput A 9.0 9.2 9.1 9.3, B 9.6 9.8 9.7 9.9 (Gbit/s): every B
//	above every A, U = 0 of 16; the exact two-sided p is 2/C(8,4) =
//	2/70 = 0.028571: significant at 0.05, higher; medians 9.15 and 9.75,
//	+6.5574%.
//	local util A 50 51 52 53, B 50.5 51.5 52.5 53.5: A's ranks 1 3 5 7,
//	W = 16, U = 6; P(U <= 6) = (1+1+2+3+5+5+7)/70 = 24/70, two-sided
//	p = 48/70 = 0.685714: not significant (~); medians 51.5 and 52,
//	+0.9709%.
//
// 1460 bytes, 3 iterations each:
//
//	throughput A 10 11 12, B 13 14 15 (Gbit/s): U test p = 2/C(6,3) =
//	0.1, never below 0.05 with 3 and 3 values (a warning says so);
//	Welch: t = 3/sqrt(1/3+1/3) = 3.674235, df = 4, p = 0.021312
//	(the closed form of the t CDF for df = 4; see stats' tests):
//	significant with --test welch.
func fixtures() ([]string, []result.Document) {
	a := sweep(
		point(131072, []float64{9.0e9, 9.2e9, 9.1e9, 9.3e9}, []float64{50, 51, 52, 53}, env(1500, "6.8.0")),
		point(1460, []float64{10e9, 11e9, 12e9}, []float64{30, 30, 30}, env(1500, "6.8.0")),
	)
	b := sweep(
		point(131072, []float64{9.6e9, 9.8e9, 9.7e9, 9.9e9}, []float64{50.5, 51.5, 52.5, 53.5}, env(9000, "6.8.0")),
		point(1460, []float64{13e9, 14e9, 15e9}, []float64{30, 30, 30}, env(9000, "6.8.0")),
		point(64, []float64{1e9}, []float64{10}, env(9000, "6.8.0")),
	)
	b.Spec.Parallel = 2
	for i := range b.Points {
		b.Points[i].Spec.Parallel = 2
	}
	return []string{"a.json", "b.json"}, []result.Document{a, b}
}

func line(t *testing.T, res Result, metric string, k Key) Line {
	t.Helper()
	for _, tb := range res.Tables {
		if tb.Metric.Key != metric {
			continue
		}
		for _, l := range tb.Lines {
			if l.Key == k {
				return l
			}
		}
	}
	t.Fatalf("no %s line for %v", metric, k)
	return Line{}
}

// compareOf makes the sources of docs, named names, and compares them.
func compareOf(t *testing.T, opts Options, names []string, docs ...result.Document) ([]Source, Result) {
	t.Helper()
	srcs, err := Sources(names, docs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Compare(srcs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return srcs, res
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestCompareUTest(t *testing.T) {
	names, docs := fixtures()
	srcs, err := Sources(names, docs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Compare(srcs, Options{Test: stats.UTest, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	big := Key{Test: spec.TCPStream, Size: "131072"}
	small := Key{Test: spec.TCPStream, Size: "1460"}

	// Six comparisons (throughput, local util and local service demand
	// at two sizes; no remote CPU), with p 2/70 (throughput at 131072),
	// 0.1, 48/70 twice and 1 twice. Benjamini-Hochberg gives the smallest
	// 6/1 * 2/70 = 12/70 = 0.171429, no longer significant: alone it
	// would be.
	if res.Options.Adjust != stats.BenjaminiHochberg || res.Comparisons != 6 {
		t.Errorf("adjustment %q over %d comparisons, want Benjamini-Hochberg over 6", res.Options.Adjust, res.Comparisons)
	}
	l := line(t, res, "throughput_bps", big)
	c := l.Cells[1].Comparison
	if !near(l.Cells[0].Center, 9.15e9) || !near(c.CenterB, 9.75e9) || !near(c.P, 2.0/70) || !near(c.PAdjusted, 12.0/70) || c.Significant || c.Verdict != stats.Same || !near(c.DeltaPct, 6.557377) {
		t.Errorf("throughput at 131072: baseline %v, %+v", l.Cells[0].Center, *c)
	}
	alone, err := Compare(srcs, Options{Test: stats.UTest, Alpha: 0.05, Adjust: stats.NoAdjustment})
	if err != nil {
		t.Fatal(err)
	}
	if c := line(t, alone, "throughput_bps", big).Cells[1].Comparison; !c.Significant || c.Verdict != stats.Higher || c.PAdjusted != c.P {
		t.Errorf("throughput at 131072 without adjustment: %+v", *c)
	}
	l = line(t, res, "local_util_pct", big)
	c = l.Cells[1].Comparison
	if !near(c.CenterA, 51.5) || !near(c.CenterB, 52) || !near(c.Statistic, 6) || !near(c.P, 48.0/70) || c.Significant || c.Verdict != stats.Same {
		t.Errorf("local util at 131072: %+v", *c)
	}
	l = line(t, res, "throughput_bps", small)
	c = l.Cells[1].Comparison
	if !near(c.P, 0.1) || c.Significant {
		t.Errorf("throughput at 1460, U test: %+v", *c)
	}
	found := false
	for _, w := range res.Warnings {
		if strings.Contains(w.Text, "cannot reach significance") && strings.Contains(strings.Join(w.Points, ";"), "TCP_STREAM 1460") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning that 3 and 3 iterations cannot reach significance: %+v", res.Warnings)
	}
	found = false
	for _, w := range res.Warnings {
		if strings.HasPrefix(w.Text, "with 4 and 4 iterations the smallest possible p is 0.0286, above the 0.00833 (alpha 0.05 over 6 comparisons)") &&
			strings.Contains(w.Text, "run at least 5 of each") && strings.Contains(strings.Join(w.Points, ";"), "throughput of TCP_STREAM 131072") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning that 4 and 4 iterations cannot reach alpha/6: %+v", res.Warnings)
	}

	if diff := cmp.Diff(map[string][]Key{"b.json": {{Test: spec.TCPStream, Size: "64"}}}, res.Unmatched); diff != "" {
		t.Errorf("unmatched (-want +got):\n%s", diff)
	}
	wantEnv := []Diff{{Source: 1, EnvDiff: result.EnvDiff{Side: result.Remote, Name: "mtu", A: "1500", B: "9000"}, Points: 2, Of: 2}}
	if diff := cmp.Diff(wantEnv, res.EnvDiffs); diff != "" {
		t.Errorf("environment differences (-want +got):\n%s", diff)
	}
	wantSpec := []Diff{{Source: 1, EnvDiff: result.EnvDiff{Side: "spec", Name: "parallel", A: "1", B: "2"}, Points: 2, Of: 2}}
	if diff := cmp.Diff(wantSpec, res.SpecDiffs); diff != "" {
		t.Errorf("test setting differences (-want +got):\n%s", diff)
	}
}

func TestCompareWelch(t *testing.T) {
	names, docs := fixtures()
	srcs, _ := Sources(names, docs)
	res, err := Compare(srcs, Options{Test: stats.WelchT, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	// Of the six p-values, this one is the second smallest (throughput
	// at 131072 has t = 0.6/sqrt(2*0.05/3/4) = 6.57 with df 6, p < 0.001;
	// the utilizations 0.6 and 1): BH makes it 6/2 * 0.021312 = 0.063935,
	// above 0.05.
	l := line(t, res, "throughput_bps", Key{Test: spec.TCPStream, Size: "1460"})
	c := l.Cells[1].Comparison
	if !near(l.Cells[0].Center, 11e9) || !near(c.CenterB, 14e9) || math.Abs(c.Statistic-3.674235) > 1e-5 || c.DF != 4 || math.Abs(c.P-0.021312) > 1e-5 ||
		math.Abs(c.PAdjusted-3*0.021312) > 1e-5 || c.Significant {
		t.Errorf("Welch at 1460: %+v", *c)
	}
	// Equal utilizations in both: no difference, and no spread to judge.
	l = line(t, res, "local_util_pct", Key{Test: spec.TCPStream, Size: "1460"})
	if c := l.Cells[1].Comparison; c.P != 1 || c.Significant || c.Verdict != stats.Same {
		t.Errorf("equal samples: %+v", *c)
	}
}

// TestCompareMatrixRows: one matrix document compares its rows with its
// first; two matrices match points by their settings.
func TestCompareMatrixRows(t *testing.T) {
	_, docs := fixtures()
	p1, p2 := docs[0].Points[0], docs[1].Points[0]
	m := result.Document{Schema: result.Schema, Command: "matrix", Matrix: &result.Matrix{Rows: []result.MatrixRow{
		{Index: 1, Label: "mtu=1500", Points: []result.Point{p1}},
		{Index: 2, Label: "mtu=9000", Points: []result.Point{p2}},
		{Index: 3, Label: "mtu=4000", Skipped: "no"},
	}}}
	srcs, err := Sources([]string{"m.json"}, []result.Document{m})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].Name != "mtu=1500" || srcs[1].Name != "mtu=9000" {
		t.Fatalf("sources %+v", srcs)
	}
	res, err := Compare(srcs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Options.Test != stats.UTest || res.Options.Alpha != 0.05 || res.Options.Adjust != stats.BenjaminiHochberg {
		t.Errorf("defaults %+v, want the U test at 0.05, Benjamini-Hochberg", res.Options)
	}
	// Three comparisons, p 2/70, 48/70, 48/70: BH makes the first 3 * 2/70.
	c := line(t, res, "throughput_bps", Key{Test: spec.TCPStream, Size: "131072"}).Cells[1].Comparison
	if c.Significant || !near(c.P, 2.0/70) || !near(c.PAdjusted, 6.0/70) || res.Comparisons != 3 || len(res.EnvDiffs) != 1 || res.EnvDiffs[0].Name != "mtu" {
		t.Errorf("rows: %+v, env %+v", *c, res.EnvDiffs)
	}

	_, res = compareOf(t, Options{}, []string{"m1.json", "m2.json"}, m, m)
	var keys []string
	for _, l := range res.Tables[0].Lines {
		keys = append(keys, l.Key.String())
		if c := l.Cells[1].Comparison; c.Significant || c.DeltaPct != 0 {
			t.Errorf("a matrix against itself: %+v", *c)
		}
	}
	if diff := cmp.Diff([]string{"mtu=1500 TCP_STREAM 131072", "mtu=9000 TCP_STREAM 131072"}, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

// TestCompareAdjustments: six comparisons that all differ, each with the
// U test's smallest p for 4 and 4 iterations, 2/70 (two sizes, every
// iteration of b above a's in throughput and in utilization, so in
// service demand too). Worked by hand:
//
//	Benjamini-Hochberg: q(i) = min over j >= i of 6/j * 2/70 = 2/70 for
//	all six: all significant (many points agree).
//	Holm: the smallest is 6 * 2/70 = 12/70 = 0.171: none significant,
//	and 4 and 4 iterations never could be (2/70 > 0.05/6 = 0.00833);
//	5 and 5 give 2/252 = 0.0079, enough.
//	None: all six at 2/70.
func TestCompareAdjustments(t *testing.T) {
	a := sweep(point(1, []float64{1, 2, 3, 4}, []float64{10, 11, 12, 13}, nil), point(2, []float64{1, 2, 3, 4}, []float64{10, 11, 12, 13}, nil))
	b := sweep(point(1, []float64{5, 6, 7, 8}, []float64{20, 21, 22, 23}, nil), point(2, []float64{5, 6, 7, 8}, []float64{20, 21, 22, 23}, nil))
	srcs, err := Sources([]string{"a", "b"}, []result.Document{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		adjust      stats.Adjustment
		wantP       float64
		significant bool
		warning     string
	}{
		{stats.BenjaminiHochberg, 2.0 / 70, true, "only differences shown by many points at once can be significant; for one alone run at least 5 of each (the fewest whose smallest p is at most alpha 0.05 over 6 comparisons)"},
		{stats.Holm, 12.0 / 70, false, "Holm's procedure needs first: no difference can be significant; run at least 5 of each"},
		{stats.NoAdjustment, 2.0 / 70, true, ""},
	} {
		res, err := Compare(srcs, Options{Adjust: tt.adjust})
		if err != nil {
			t.Fatal(err)
		}
		if res.Comparisons != 6 {
			t.Errorf("%s: %d comparisons, want 6", tt.adjust, res.Comparisons)
		}
		n := 0
		for _, tb := range res.Tables {
			for _, l := range tb.Lines {
				n++
				c := l.Cells[1].Comparison
				if !near(c.P, 2.0/70) || !near(c.PAdjusted, tt.wantP) || c.Significant != tt.significant {
					t.Errorf("%s, %s of %s: p %v adjusted %v significant %v; want 2/70, %v, %v", tt.adjust, tb.Metric.Name, l.Key, c.P, c.PAdjusted, c.Significant, tt.wantP, tt.significant)
				}
			}
		}
		if n != 6 {
			t.Errorf("%s: %d lines, want 6", tt.adjust, n)
		}
		var texts []string
		for _, w := range res.Warnings {
			texts = append(texts, w.Text)
		}
		got := strings.Join(texts, "\n")
		if tt.warning == "" && strings.Contains(got, "comparisons)") || tt.warning != "" && !strings.Contains(got, tt.warning) {
			t.Errorf("%s: warnings %q, want %q", tt.adjust, got, tt.warning)
		}
	}
	if _, err := Compare(srcs, Options{Adjust: "bonferroni"}); err == nil || !strings.Contains(err.Error(), "bonferroni") {
		t.Errorf("unknown adjustment: %v", err)
	}
}

func TestSamplesLeaveOutInterrupted(t *testing.T) {
	p := point(1, []float64{1, 2, 3}, []float64{1, 1, 1}, nil).Result
	p.Iterations[2].Interrupted = true
	if got := Samples(p, metrics[0]); !cmp.Equal(got, []float64{1, 2}) {
		t.Errorf("samples %v, want the two complete iterations", got)
	}
	single := result.Result{Summary: result.Summary{BitsPerSecond: 5}, Started: time.Unix(0, 0)}
	if got := Samples(single, metrics[0]); !cmp.Equal(got, []float64{5}) {
		t.Errorf("single run: %v", got)
	}
	single.Interrupted = true
	if got := Samples(single, metrics[0]); len(got) != 0 {
		t.Errorf("interrupted single run: %v", got)
	}
}

func TestSourcesErrors(t *testing.T) {
	_, docs := fixtures()
	if _, err := Sources([]string{"a"}, docs[:1]); err == nil || !strings.Contains(err.Error(), "two") {
		t.Errorf("one sweep: %v", err)
	}
	empty := result.Document{Schema: result.Schema}
	if _, err := Sources([]string{"a", "e"}, []result.Document{docs[0], empty}); err == nil || !strings.Contains(err.Error(), "e holds no measured point") {
		t.Errorf("empty document: %v", err)
	}
	other := sweep(point(99, []float64{1}, []float64{1}, nil))
	srcs, _ := Sources([]string{"a", "o"}, []result.Document{docs[0], other})
	if _, err := Compare(srcs, Options{}); err == nil || !strings.Contains(err.Error(), "no point in common") {
		t.Errorf("nothing in common: %v", err)
	}
}

// TestCompareCPUSplit: the CPU split is compared like any other figure.
// One point, 4 and 4 iterations, local CPU only, worked by hand:
//
//	throughput 1..4 against 5..8: p 2/70
//	util 50..53 against 50.5..53.5 (ranks 1 3 5 7): p 48/70, and its
//	service demand (util/10) too
//	user 10 in all: p 1
//	irq 0 in every iteration of both: never entered, not compared
//	system 30..33 against 40..43: p 2/70, medians 31.5 and 41.5, +31.746%
//	softirq 5..8 against 5.5..8.5: p 48/70
//
// Six comparisons, sorted 2/70, 2/70, 48/70 x3, 1. BH: 6/2 * 2/70 =
// 6/70 for both 2/70 (the first's 6 * 2/70 lowered to it), 6/5 * 48/70 =
// 0.822857 for the three 48/70.
func TestCompareCPUSplit(t *testing.T) {
	mk := func(bps, util, system, softirq []float64) result.Document {
		sp := spec.Default()
		r := result.Result{Spec: sp, Directions: []result.DirectionResult{{}}}
		for i := range bps {
			c := &measure.CPU{CPUs: 2, UtilPct: util[i], ServiceDemandMicrosPerKB: util[i] / 10, UserPct: 10, SystemPct: system[i], SoftIRQPct: softirq[i]}
			r.Iterations = append(r.Iterations, result.Iteration{Index: i + 1, Summary: result.Summary{BitsPerSecond: bps[i], LocalCPU: c}})
		}
		return sweep(result.Point{MsgSize: sp.SendSize, Result: r})
	}
	a := mk([]float64{1, 2, 3, 4}, []float64{50, 51, 52, 53}, []float64{30, 31, 32, 33}, []float64{5, 6, 7, 8})
	b := mk([]float64{5, 6, 7, 8}, []float64{50.5, 51.5, 52.5, 53.5}, []float64{40, 41, 42, 43}, []float64{5.5, 6.5, 7.5, 8.5})
	srcs, res := compareOf(t, Options{}, []string{"a", "b"}, a, b)
	var keys []string
	for _, tb := range res.Tables {
		keys = append(keys, tb.Metric.Key)
	}
	want := []string{"throughput_bps", "local_util_pct", "local_service_demand_us_per_kb", "local_user_pct", "local_system_pct", "local_softirq_pct"}
	if diff := cmp.Diff(want, keys); diff != "" || res.Comparisons != 6 {
		t.Fatalf("figures (-want +got), %d comparisons:\n%s", res.Comparisons, diff)
	}
	k := Key{Test: spec.TCPStream, Size: srcs[0].Order[0].Size}
	c := line(t, res, "local_system_pct", k).Cells[1].Comparison
	if !near(c.CenterA, 31.5) || !near(c.CenterB, 41.5) || !near(c.DeltaPct, 31.746032) || !near(c.P, 2.0/70) || !near(c.PAdjusted, 6.0/70) || c.Significant {
		t.Errorf("local system: %+v", *c)
	}
	for metric, p := range map[string]float64{"local_user_pct": 1, "local_softirq_pct": 48.0 / 70} {
		if c := line(t, res, metric, k).Cells[1].Comparison; !near(c.P, p) {
			t.Errorf("%s: p %v, want %v", metric, c.P, p)
		}
	}
	if c := line(t, res, "local_softirq_pct", k).Cells[1].Comparison; !near(c.PAdjusted, 6.0/5*48/70) {
		t.Errorf("local softirq: adjusted p %v, want 6/5 * 48/70 = 0.822857", c.PAdjusted)
	}
}

// TestCompareAcrossDirections: is A->B the same as B->A? A TCP_STREAM
// sweep and a TCP_MAERTS one of the same sizes are matched point by point
// (they have no point in common by test), the tests' difference listed
// with the settings'. Worked by hand: at 131072 throughput 9.0..9.3
// against 9.6..9.9 Gbit/s, p 2/70; at 1460 3 and 3 values fully apart,
// p 0.1.
func TestCompareAcrossDirections(t *testing.T) {
	_, docs := fixtures()
	a := docs[0]
	b := sweep(
		point(131072, []float64{9.6e9, 9.8e9, 9.7e9, 9.9e9}, []float64{50.5, 51.5, 52.5, 53.5}, env(1500, "6.8.0")),
		point(1460, []float64{13e9, 14e9, 15e9}, []float64{30, 30, 30}, env(1500, "6.8.0")),
	)
	for i := range b.Points {
		b.Points[i].Spec.Kind = spec.TCPMaerts
	}
	_, res := compareOf(t, Options{Adjust: stats.NoAdjustment}, []string{"ab.json", "ba.json"}, a, b)
	if !res.AcrossDirections {
		t.Error("not marked as across directions")
	}
	c := line(t, res, "throughput_bps", Key{Test: spec.TCPStream, Size: "131072"}).Cells[1].Comparison
	if !near(c.P, 2.0/70) || !c.Significant || c.Verdict != stats.Higher {
		t.Errorf("throughput at 131072: %+v", *c)
	}
	if c := line(t, res, "throughput_bps", Key{Test: spec.TCPStream, Size: "1460"}).Cells[1].Comparison; !near(c.P, 0.1) {
		t.Errorf("throughput at 1460: %+v", *c)
	}
	found := false
	for _, d := range res.SpecDiffs {
		if d.Name == "test" && d.A == "TCP_STREAM" && d.B == "TCP_MAERTS" && d.Points == 2 {
			found = true
		}
	}
	if !found {
		t.Errorf("the tests' difference is not listed: %+v", res.SpecDiffs)
	}

	// A source with both directions, or the same direction in both: no
	// matching across directions.
	mixed := sweep(point(64, []float64{1}, []float64{1}, nil), point(128, []float64{1}, []float64{1}, nil))
	mixed.Points[1].Spec.Kind = spec.TCPMaerts
	srcs, _ := Sources([]string{"ab.json", "mixed.json"}, []result.Document{a, mixed})
	if _, err := Compare(srcs, Options{}); err == nil || !strings.Contains(err.Error(), "no point in common") {
		t.Errorf("mixed directions: %v", err)
	}
}

// TestComparePairs: every pair of three matrix rows, A, B and B again,
// adjusted as one family. Each pair makes three comparisons (throughput,
// local utilization, service demand), nine in all; A against either B
// has throughput p 2/70 and the others 48/70 (TestCompareUTest), B
// against B p 1. Benjamini-Hochberg over the nine sorted p (2/70, 2/70,
// 48/70 x4, 1 x3): the two 2/70 get min over j >= 2 of 9/j * p(j) =
// 9/2 * 2/70 = 9/70, which is not significant at 0.05 (it was 6/70 over
// one pair's three comparisons, TestCompareMatrixRows).
func TestComparePairs(t *testing.T) {
	_, docs := fixtures()
	p1, p2 := docs[0].Points[0], docs[1].Points[0]
	m := result.Document{Schema: result.Schema, Command: "matrix", Matrix: &result.Matrix{Rows: []result.MatrixRow{
		{Index: 1, Label: "tx=on", Points: []result.Point{p1}},
		{Index: 2, Label: "tx=off", Points: []result.Point{p2}},
		{Index: 3, Label: "tx=off again", Points: []result.Point{p2}},
	}}}
	srcs, err := Sources([]string{"m.json"}, []result.Document{m})
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := ComparePairs(srcs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names [][]string
	for _, r := range pairs {
		names = append(names, r.Sources)
		if r.Comparisons != 9 {
			t.Errorf("%v: family of %d, want the 9 of all pairs", r.Sources, r.Comparisons)
		}
	}
	want := [][]string{{"tx=on", "tx=off"}, {"tx=on", "tx=off again"}, {"tx=off", "tx=off again"}}
	if d := cmp.Diff(want, names); d != "" {
		t.Fatalf("pairs (-want +got):\n%s", d)
	}
	k := Key{Test: spec.TCPStream, Size: "131072"}
	for i, wantP := range []float64{9.0 / 70, 9.0 / 70} {
		c := line(t, pairs[i], "throughput_bps", k).Cells[1].Comparison
		if !near(c.P, 2.0/70) || !near(c.PAdjusted, wantP) || c.Significant {
			t.Errorf("%v throughput: p %g adjusted %g significant %v, want 2/70 adjusted to %g, not significant", pairs[i].Sources, c.P, c.PAdjusted, c.Significant, wantP)
		}
	}
	if c := line(t, pairs[2], "throughput_bps", k).Cells[1].Comparison; c.DeltaPct != 0 || c.Significant {
		t.Errorf("tx=off against itself: %+v", *c)
	}
}

// TestCompareWire: the sender's device's packet rate and bytes per
// packet are compared like the other figures. TSO on (A: 4 iterations of
// about 20k packets/s of 64 KB) against off (B: about 800k of 1514 B):
// every B above every A in packets per second, p = 2/70 (U = 0 of 16),
// and below in bytes per packet, p = 2/70; medians 20.5k and 805k
// packets/s. Adjusted (Benjamini-Hochberg over 3 comparisons, all at
// 2/70): 2/70.
func TestCompareWire(t *testing.T) {
	mk := func(bps, pps, bpp []float64) result.Document {
		sp := spec.Default()
		r := result.Result{Spec: sp, Directions: []result.DirectionResult{{}}}
		for i := range bps {
			r.Iterations = append(r.Iterations, result.Iteration{Index: i + 1, Summary: result.Summary{BitsPerSecond: bps[i],
				SenderWirePacketsPerSecond: pps[i], SenderWireBytesPerPacket: bpp[i]}})
		}
		return sweep(result.Point{MsgSize: sp.SendSize, Result: r})
	}
	a := mk([]float64{1, 2, 3, 4}, []float64{20e3, 21e3, 19e3, 22e3}, []float64{65000, 64000, 64500, 65100})
	b := mk([]float64{5, 6, 7, 8}, []float64{800e3, 810e3, 790e3, 820e3}, []float64{1514, 1514, 1513, 1514})
	srcs, res := compareOf(t, Options{}, []string{"a", "b"}, a, b)
	k := Key{Test: spec.TCPStream, Size: srcs[0].Order[0].Size}
	pps := line(t, res, "sender_wire_pps", k).Cells[1].Comparison
	if !near(pps.CenterA, 20.5e3) || !near(pps.CenterB, 805e3) || !near(pps.P, 2.0/70) || !near(pps.PAdjusted, 2.0/70) || !pps.Significant {
		t.Errorf("packets per second: %+v", *pps)
	}
	bpp := line(t, res, "sender_wire_bytes_per_packet", k).Cells[1].Comparison
	if !near(bpp.P, 2.0/70) || !bpp.Significant || bpp.DeltaPct > -97 {
		t.Errorf("bytes per packet: %+v", *bpp)
	}
	if res.Comparisons != 3 {
		t.Errorf("%d comparisons, want 3 (throughput and the two device figures)", res.Comparisons)
	}
}

// TestCompareStealWarning: a point whose hypervisor steal moved between
// the sources is named, with both medians, since util counts steal as
// busy; one whose steal moved little is not. Worked by hand: local steal
// 12..14 against 0..2, medians 13 and 1, 12 points apart with util at
// most 21 (a tenth: 2.1): warned; remote steal 1.5 against 0, util 9.5
// and 8: 1.5 apart, over a tenth of the util but under 2 points: not;
// at util 53 against 56, steal 13 against 16: 3 points apart but under
// a tenth of the util (5.6): not; while that pair's remote side, util 2
// against 5, steal 0 against 3, is over both (its own util's tenth is
// 0.5, the local side's would be 5.6): warned.
func TestCompareStealWarning(t *testing.T) {
	mk := func(busy, remoteBusy float64, local, remote []float64) result.Document {
		sp := spec.Default()
		r := result.Result{Spec: sp, Directions: []result.DirectionResult{{}}}
		for i := range local {
			l := &measure.CPU{CPUs: 2, UtilPct: busy + local[i], StealPct: local[i], SystemPct: busy}
			rc := &measure.CPU{CPUs: 2, UtilPct: remoteBusy + remote[i], StealPct: remote[i], SystemPct: remoteBusy}
			r.Iterations = append(r.Iterations, result.Iteration{Index: i + 1, Summary: result.Summary{BitsPerSecond: 9e8 + float64(i), LocalCPU: l, RemoteCPU: rc}})
		}
		return sweep(result.Point{MsgSize: sp.SendSize, Result: r})
	}
	a := mk(8, 8, []float64{12, 13, 14, 13}, []float64{1.5, 1.5, 1.5, 1.5})
	b := mk(8, 8, []float64{0, 1, 2, 1}, []float64{0, 0, 0, 0})
	c := mk(40, 2, []float64{13, 13, 13, 13}, []float64{0, 0, 0, 0})
	d := mk(40, 2, []float64{16, 16, 16, 16}, []float64{3, 3, 3, 3})
	_, res := compareOf(t, Options{}, []string{"a", "b"}, a, b)
	var got []Warning
	for _, w := range res.Warnings {
		if strings.Contains(w.Text, "steal") {
			got = append(got, w)
		}
	}
	want := []Warning{{Text: stealText, Points: []string{"local steal 13.0% -> 1.0% at TCP_STREAM 131072"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steal warnings (-want +got):\n%s", diff)
	}

	_, res = compareOf(t, Options{}, []string{"c", "d"}, c, d)
	var at []string
	for _, w := range res.Warnings {
		if strings.Contains(w.Text, "steal") {
			at = append(at, w.Points...)
		}
	}
	for _, p := range at {
		if strings.HasPrefix(p, "local") {
			t.Errorf("steal 13 against 16 at util 53 and 56 warned: %s", p)
		}
	}
	if diff := cmp.Diff([]string{"remote steal 0.0% -> 3.0% at TCP_STREAM 131072"}, at); diff != "" {
		t.Errorf("steal warnings of c and d (-want +got):\n%s", diff)
	}
}
