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

func TestPlotRefusesOtherKinds(t *testing.T) {
	p := run.Point{MsgSize: 1}
	p.Spec.Kind = "TCP_RR"
	if _, err := Plot([]Series{{Label: "rr", Points: []run.Point{p}}}); err == nil {
		t.Errorf("a TCP_RR result drew a throughput plot")
	}
}
