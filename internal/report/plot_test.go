package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/run"
	"wirespeed/internal/spec"
)

func TestLabels(t *testing.T) {
	doc := func(mod func(*run.Document)) run.Document {
		d := run.Document{}
		d.Spec = spec.Default()
		d.Remote.Address = "10.0.0.2:7575"
		mod(&d)
		return d
	}
	same := func(*run.Document) {}
	tests := []struct {
		name string
		docs []run.Document
		want []string
	}{
		{"one file", []run.Document{doc(same)}, []string{"a"}},
		{"nothing differs", []run.Document{doc(same), doc(same)}, []string{"a", "b"}},
		{"message size is the sweep's", []run.Document{doc(same), doc(func(d *run.Document) { d.Spec.SendSize = 64 })}, []string{"a", "b"}},
		{"embedded servers' ports", []run.Document{doc(same), doc(func(d *run.Document) { d.Remote.Address = "10.0.0.2:40000" })}, []string{"a", "b"}},
		{"two fields", []run.Document{
			doc(func(d *run.Document) { d.Spec.CongestionControl = "bbr" }),
			doc(func(d *run.Document) { d.Spec.Parallel = 4 }),
		}, []string{"congestion_control=bbr, parallel=1", "congestion_control=default, parallel=4"}},
		{"test first", []run.Document{
			doc(func(d *run.Document) { d.Spec.Kind, d.Spec.NoDelay = spec.TCPMaerts, true }),
			doc(same),
		}, []string{"test=TCP_MAERTS, nodelay=true", "test=TCP_STREAM, nodelay=false"}},
		{"environments", []run.Document{
			doc(func(d *run.Document) { e := vethEnv(); d.Remote.Env, d.Local.Env = &e, &e }),
			doc(func(d *run.Document) {
				e := vethEnv()
				e.Hostname = "other"
				e.Interface = &run.Interface{Name: "wst-a", Driver: "veth", MTU: 1500, SpeedMbps: 10000,
					Offloads: e.Interface.Offloads, Qdisc: e.Interface.Qdisc}
				d.Remote.Env = &e
				l := vethEnv()
				d.Local.Env = &l
			}),
		}, []string{"remote mtu=9000", "remote mtu=1500"}},
		{"an environment missing is no difference", []run.Document{
			doc(func(d *run.Document) { e := vethEnv(); d.Remote.Env = &e }),
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
	rr := run.Point{MsgSize: 1}
	rr.Spec.Kind = spec.TCPRR
	rr.Summary.RRSummary = &run.RRSummary{Latency: run.Latency{Count: 1, P50: 10, P99: 20, P999: 30}}
	st := run.Point{MsgSize: 1}
	st.Spec.Kind = spec.TCPStream
	if _, err := Plot([]Series{{Label: "rr", Points: []run.Point{rr}}, {Label: "stream", Points: []run.Point{st}}}); err == nil {
		t.Errorf("TCP_RR and TCP_STREAM results drew one plot")
	}
	noLatency := rr
	noLatency.Summary.RRSummary = nil
	if _, err := Plot([]Series{{Label: "rr", Points: []run.Point{noLatency}}}); err == nil {
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
