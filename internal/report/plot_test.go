package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/sysinfo"
)

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
	if _, err := Plot([]Series{{Label: "rr", Points: []result.Point{rr}}, {Label: "stream", Points: []result.Point{st}}}); err == nil {
		t.Errorf("TCP_RR and TCP_STREAM results drew one plot")
	}
	noLatency := rr
	noLatency.Summary.RRSummary = nil
	if _, err := Plot([]Series{{Label: "rr", Points: []result.Point{noLatency}}}); err == nil {
		t.Errorf("a TCP_RR result without latency figures drew a latency plot")
	}
}

// TestLatencyPlot: a request/response result draws three lines per
// series (p50, p99, p99.9) through the recorded percentiles.
func TestLatencyPlot(t *testing.T) {
	doc := load(t, "rr.json")
	pts := PointsOf(doc)
	if len(pts) != 1 || pts[0].MsgSize != doc.Spec.RequestSize {
		t.Fatalf("points %+v", pts)
	}
	p, err := Plot([]Series{{Label: "a", Points: pts}, {Label: "b", Points: pts}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Title.Text == "" || p.Y.Label.Text != "round-trip latency (us)" {
		t.Errorf("title %q, y label %q", p.Title.Text, p.Y.Label.Text)
	}
	l := doc.Summary.RRSummary.Latency
	if p.Y.Min > l.P50 || p.Y.Max < l.P999 {
		t.Errorf("y axis %g..%g does not hold p50 %g .. p99.9 %g", p.Y.Min, p.Y.Max, l.P50, l.P999)
	}
}
