package plot

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/sysinfo"
)

// vethEnv is a record as sysinfo gives it for a lab's veth end.
func vethEnv() sysinfo.Env {
	return sysinfo.Env{
		Hostname:      "lab-a",
		KernelRelease: "6.18.44",
		CPU:           sysinfo.CPUInfo{Model: "Intel(R) Xeon(R) Processor", Count: 2},
		Peer:          "10.77.0.2",
		Interface: &sysinfo.Interface{
			Name: "wst-a", Index: 2, Driver: "veth", DriverVersion: "1.0", MTU: 9000,
			SpeedMbps: 10000, Duplex: "full",
			Offloads: []netdev.FeatureState{
				{Name: "rx-checksumming", On: true, Requested: true},
				{Name: "tx-checksumming", On: true, Requested: true},
				{Name: "tcp-segmentation-offload", On: false, Requested: true}, // kept off: sg is off
				{Name: "large-receive-offload", Fixed: true},
			},
			Features: []netdev.FeatureState{
				{Name: "tx-scatter-gather", On: false},
				{Name: "tx-tcp-segmentation", On: false, Requested: true},
				{Name: "rx-lro", Fixed: true},
				{Name: "highdma", On: true, Requested: true},
			},
			Qdisc: &sysinfo.Qdisc{Kind: "tbf", Handle: "1:0", RateBitsPerSecond: 1e9, BurstBytes: 500000, LimitBytes: 1125000},
		},
		CongestionControl: sysinfo.CongestionControl{Default: "cubic", Available: []string{"reno", "cubic"}},
		Sysctls: map[string][]int64{
			"net.ipv4.tcp_rmem":  {4096, 131072, 6291456},
			"net.core.rmem_max":  {212992},
			"net.core.busy_poll": {0},
		},
	}
}

func TestLabels(t *testing.T) {
	doc := func(mod func(*result.Document)) result.Document {
		d := result.Document{}
		d.Spec = spec.Default()
		d.Remote.Address = "10.0.0.2:7575"
		mod(&d)
		return d
	}
	same := func(*result.Document) {}
	tests := []struct {
		name string
		docs []result.Document
		want []string
	}{
		{"one file", []result.Document{doc(same)}, []string{"a"}},
		{"nothing differs", []result.Document{doc(same), doc(same)}, []string{"a", "b"}},
		{"message size is the sweep's", []result.Document{doc(same), doc(func(d *result.Document) { d.Spec.SendSize = 64 })}, []string{"a", "b"}},
		{"the interval is not the measurement", []result.Document{doc(same), doc(func(d *result.Document) { d.Spec.Interval = 0 })}, []string{"a", "b"}},
		{"the interval beside what differs", []result.Document{
			doc(func(d *result.Document) { d.Spec.CongestionControl = "bbr" }),
			doc(func(d *result.Document) { d.Spec.Interval = 0 }),
		}, []string{"congestion_control=bbr", "congestion_control=default"}},
		{"embedded servers' ports", []result.Document{doc(same), doc(func(d *result.Document) { d.Remote.Address = "10.0.0.2:40000" })}, []string{"a", "b"}},
		{"two fields", []result.Document{
			doc(func(d *result.Document) { d.Spec.CongestionControl = "bbr" }),
			doc(func(d *result.Document) { d.Spec.Parallel = 4 }),
		}, []string{"congestion_control=bbr, parallel=1", "congestion_control=default, parallel=4"}},
		{"test first", []result.Document{
			doc(func(d *result.Document) { d.Spec.Kind, d.Spec.NoDelay = spec.TCPMaerts, true }),
			doc(same),
		}, []string{"test=TCP_MAERTS, nodelay=true", "test=TCP_STREAM, nodelay=false"}},
		{"environments", []result.Document{
			doc(func(d *result.Document) { e := vethEnv(); d.Remote.Env, d.Local.Env = &e, &e }),
			doc(func(d *result.Document) {
				e := vethEnv()
				e.Hostname = "other"
				e.Interface = &sysinfo.Interface{Name: "wst-a", Driver: "veth", MTU: 1500, SpeedMbps: 10000,
					Offloads: e.Interface.Offloads, Qdisc: e.Interface.Qdisc}
				d.Remote.Env = &e
				l := vethEnv()
				d.Local.Env = &l
			}),
		}, []string{"remote mtu=9000", "remote mtu=1500"}},
		// The system's default congestion control is what a run without
		// --cc used: one setting, not "cc=bbr, congestion_control=default".
		{"a congestion control by default and by --cc", []result.Document{
			doc(func(d *result.Document) {
				e := vethEnv()
				e.CongestionControl.Default = "bbr"
				d.Remote.Env, d.Local.Env = &e, &e
			}),
			doc(func(d *result.Document) {
				e := vethEnv()
				d.Remote.Env, d.Local.Env = &e, &e
				d.Spec.CongestionControl = "cubic"
			}),
		}, []string{"congestion_control=bbr", "congestion_control=cubic"}},
		{"the sides' defaults differ", []result.Document{
			doc(func(d *result.Document) {
				l, r := vethEnv(), vethEnv()
				r.CongestionControl.Default = "bbr"
				d.Local.Env, d.Remote.Env = &l, &r
			}),
			doc(func(d *result.Document) {
				e := vethEnv()
				d.Remote.Env, d.Local.Env = &e, &e
			}),
		}, []string{"congestion_control=local:cubic/remote:bbr", "congestion_control=cubic"}},
		{"--label cc= says what the default was", []result.Document{
			doc(func(d *result.Document) { d.Labels = map[string]string{"cc": "bbr"} }),
			doc(func(d *result.Document) { d.Spec.CongestionControl = "cubic" }),
		}, []string{"congestion_control=bbr", "congestion_control=cubic"}},
		{"--label cc= as --cc said", []result.Document{
			doc(func(d *result.Document) { d.Labels = map[string]string{"cc": "bbr"}; d.Spec.CongestionControl = "bbr" }),
			doc(func(d *result.Document) { d.Spec.CongestionControl = "cubic" }),
		}, []string{"congestion_control=bbr", "congestion_control=cubic"}},
		{"--label cc= against --cc kept", []result.Document{
			doc(func(d *result.Document) { d.Labels = map[string]string{"cc": "bbr"}; d.Spec.CongestionControl = "reno" }),
			doc(func(d *result.Document) { d.Spec.CongestionControl = "cubic" }),
		}, []string{"cc=bbr, congestion_control=reno", "cc=default, congestion_control=cubic"}},
		{"an environment missing is no difference", []result.Document{
			doc(func(d *result.Document) { e := vethEnv(); d.Remote.Env = &e }),
			doc(same),
		}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names := []string{"dir/a.json", "b.json"}[:len(tt.docs)]
			if d := cmp.Diff(tt.want, Labels(names, tt.docs)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestPlotRefusesMixedKinds(t *testing.T) {
	rr := result.Point{MsgSize: 1}
	rr.Spec.Kind = spec.TCPRR
	rr.Summary.RRSummary = &result.RRSummary{Latency: stats.Latency{Count: 1, P50: 10, P99: 20, P999: 30}}
	st := result.Point{MsgSize: 1}
	st.Spec.Kind = spec.TCPStream
	if _, err := Plot([]report.Series{{Label: "rr", Points: []result.Point{rr}}, {Label: "stream", Points: []result.Point{st}}}); err == nil {
		t.Errorf("TCP_RR and TCP_STREAM results drew one plot")
	}
	noLatency := rr
	noLatency.Summary.RRSummary = nil
	if _, err := Plot([]report.Series{{Label: "rr", Points: []result.Point{noLatency}}}); err == nil {
		t.Errorf("a TCP_RR result without latency figures drew a latency plot")
	}
}

// TestLatencyPlot: a request/response result draws three lines per
// series (p50, p99, p99.9) through the recorded percentiles.
func TestLatencyPlot(t *testing.T) {
	doc := load(t, "rr.json")
	pts := report.PointsOf(doc)
	if len(pts) != 1 || pts[0].MsgSize != doc.Spec.RequestSize {
		t.Fatalf("points %+v", pts)
	}
	p, err := Plot([]report.Series{{Label: "a", Points: pts}, {Label: "b", Points: pts}})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Main
	if m.Title.Text == "" || m.Y.Label.Text != "round-trip latency (us)" {
		t.Errorf("title %q, y label %q", m.Title.Text, m.Y.Label.Text)
	}
	l := doc.Summary.RRSummary.Latency
	if m.Y.Min > l.P50 || m.Y.Max < l.Max {
		t.Errorf("y axis %g..%g does not hold p50 %g .. max %g", m.Y.Min, m.Y.Max, l.P50, l.Max)
	}
}

// pt makes a point of kind k at size with throughput bps and, when cpu,
// both sides' CPU figures.
func pt(k spec.Kind, size int, bps float64, cpu bool) result.Point {
	p := result.Point{MsgSize: size}
	p.Spec.Kind = k
	p.Summary.BitsPerSecond = bps
	if cpu {
		p.Summary.LocalCPU = &measure.CPU{CPUs: 2, UtilPct: 40, ServiceDemandMicrosPerKB: 1.5}
		p.Summary.RemoteCPU = &measure.CPU{CPUs: 2, UtilPct: 60, ServiceDemandMicrosPerKB: 2.5}
	}
	return p
}

// TestPlotKinds: the figure fits the results: lines for several sizes,
// bars for one size per series, a log value axis where the data spans a
// decade, and a CPU panel only where there are CPU figures.
func TestPlotKinds(t *testing.T) {
	sweep := []result.Point{pt(spec.TCPStream, 1, 2e6, true), pt(spec.TCPStream, 64, 99e6, true), pt(spec.TCPStream, 1460, 900e6, true)}
	f, err := Plot([]report.Series{{Label: "a", Points: sweep}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Main.Y.Scale.(gplot.LogScale); !ok {
		t.Errorf("2 to 900 Mbit/s on a %T y axis, want log", f.Main.Y.Scale)
	}
	if f.Main.Y.Min > 2 || f.Main.Y.Max < 900 {
		t.Errorf("y axis %g..%g Mbit/s does not hold 2..900", f.Main.Y.Min, f.Main.Y.Max)
	}
	if f.CPU == nil || !strings.Contains(f.CPU.Y.Label.Text, "service demand") {
		t.Errorf("a sweep with CPU figures has no service demand panel")
	}

	narrow := []result.Point{pt(spec.TCPStream, 1460, 900e6, false), pt(spec.TCPStream, 8192, 950e6, false)}
	f, err = Plot([]report.Series{{Label: "a", Points: narrow}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Main.Y.Scale.(gplot.LinearScale); !ok || f.Main.Y.Min != 0 {
		t.Errorf("900 to 950 Mbit/s on a %T axis from %g, want linear from 0", f.Main.Y.Scale, f.Main.Y.Min)
	}
	if f.CPU != nil {
		t.Errorf("a CPU panel without CPU figures")
	}

	// A matrix of one size: bars, the settings as categories, whiskers.
	var rows []report.Series
	for i, label := range []string{"tso=on mtu=1500", "tso=off mtu=1500", "tso=on mtu=9000"} {
		p := pt(spec.TCPStream, 131072, float64(900+40*i)*1e6, true)
		lo, hi := p.Summary.BitsPerSecond*0.98, p.Summary.BitsPerSecond*1.02
		p.Summary.Confidence = &result.Confidence{Level: 0.99, FigureConfidence: result.FigureConfidence{Lo: &lo, Hi: &hi}, Iterations: 3}
		rows = append(rows, report.Series{Label: label, Points: []result.Point{p}})
	}
	f, err = Plot(rows)
	if err != nil {
		t.Fatal(err)
	}
	var b *bars
	for _, pl := range f.items {
		if bb, ok := pl.(*bars); ok {
			b = bb
		}
	}
	if b == nil || len(b.xs) != 3 || b.w.hi[2] != 980*1.02 {
		t.Fatalf("matrix bars: %+v", b)
	}
	ticks := f.Main.X.Tick.Marker.Ticks(f.Main.X.Min, f.Main.X.Max)
	if len(ticks) != 3 || ticks[1].Label != "tso=off\nmtu=1500" {
		t.Errorf("categories %+v", ticks)
	}
	if f.CPU == nil || !strings.Contains(f.CPU.Y.Label.Text, "CPU utilization") {
		t.Errorf("no CPU utilization panel under the bars")
	}
}

// TestLatencyKey: a request/response sweep's key names every series and
// the three percentiles' dash styles, and the dashes in the key are the
// dashes of the lines.
func TestLatencyKey(t *testing.T) {
	doc := load(t, "rr.json")
	p1 := report.PointsOf(doc)[0]
	p2 := p1
	p2.MsgSize = 1024
	f, err := Plot([]report.Series{{Label: "a", Points: []result.Point{p1, p2}}, {Label: "b", Points: []result.Point{p1, p2}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.write(&buf, ".svg"); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{">a<", ">b<", ">p50<", ">p99<", ">p99.9<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the key lacks %s", want)
		}
	}
	dashesOf := map[string]bool{}
	for _, pl := range f.items {
		if l, ok := pl.(*plotter.Line); ok {
			dashesOf[fmt.Sprint(l.Dashes)] = true
		}
	}
	if len(dashesOf) != 3 {
		t.Errorf("%d dash styles among the lines, want 3 (p50, p99, p99.9): %v", len(dashesOf), dashesOf)
	}
}

// TestPlotFontsEmbedded: the SVG carries its fonts, so it renders the
// same where they are not installed; PNG and PDF are what they say.
func TestPlotFontsEmbedded(t *testing.T) {
	f, err := Plot([]report.Series{{Label: "a", Points: report.PointsOf(load(t, "cpu.json"))}})
	if err != nil {
		t.Fatal(err)
	}
	for ext, want := range map[string]string{".svg": "@font-face", ".png": "\x89PNG", ".pdf": "%PDF"} {
		var buf bytes.Buffer
		if err := f.write(&buf, ext); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("%s output lacks %q", ext, want)
		}
		if ext == ".svg" && !strings.Contains(buf.String(), "base64") {
			t.Errorf("the SVG names fonts without embedding them")
		}
	}
}
