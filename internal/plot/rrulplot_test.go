package plot

import (
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/plotter"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

func rrulDoc() result.Document {
	var d result.Document
	rec := result.ProbeRecord{LoadStartS: 2, LoadEndS: 4}
	for i := range 200 {
		ts := float64(i) * 0.02
		rtt := 0.1
		if ts >= 2 {
			rtt = 50 + float64(i%10)
		}
		rec.UDP = append(rec.UDP, result.ProbePoint{T: ts, RTTMs: rtt, Lost: i == 150})
	}
	rec.TCP = []result.ProbePoint{{T: 0.1, RTTMs: 0.2, ConnectMs: 0.2}, {T: 3, RTTMs: 60, ConnectMs: 55}}
	d.Spec = spec.Test{Kind: spec.RRUL, RRUL: spec.DefaultRRUL()}
	d.Summary.UnderLoad = result.UnderLoadOf(d.Spec, rec, nil)
	d.Summary.UnderLoad.UpBitsPerSecond, d.Summary.UnderLoad.DownBitsPerSecond = 18e6, 19e6
	return d
}

// TestRRULCDF: each phase's line holds its answered probes, idle before
// the load's start and loaded within it, sorted, ending at 1.
func TestRRULCDF(t *testing.T) {
	f, err := RRULCDF([]string{"a"}, []result.Document{rrulDoc()})
	if err != nil {
		t.Fatal(err)
	}
	var lines []*plotter.Line
	// 100 idle UDP probes and 1 TCP; 99 loaded UDP (one lost) and 1 TCP.
	want := []int{101, 100}
	for _, it := range f.items {
		if l, ok := it.(*plotter.Line); ok {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want idle and loaded", len(lines))
	}
	for i, l := range lines {
		if l.XYs.Len() != want[i] {
			t.Errorf("line %d has %d points, want %d", i, l.XYs.Len(), want[i])
		}
		if _, y := l.XYs.XY(l.XYs.Len() - 1); y != 1 {
			t.Errorf("line %d ends at %g", i, y)
		}
	}
	if x, _ := lines[1].XYs.XY(0); x != 50 {
		t.Errorf("loaded line starts at %g ms, want the fastest loaded probe's 50", x)
	}
	dir := t.TempDir()
	all, err := RRULAll(rrulDoc())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"all.png", "cdf.svg"} {
		fig := all
		if name == "cdf.svg" {
			fig = f
		}
		path := filepath.Join(dir, name)
		if err := SavePlot(fig, path); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRRULThroughputFlows: the upper panel's lines are the timeline's:
// from the load's start on (the idle interval left out), each
// direction's sum and each flow's own figures at each interval's middle,
// a starved flow (0 bit/s) drawn too.
func TestRRULThroughputFlows(t *testing.T) {
	u := &result.UnderLoad{
		Probes: result.ProbeRecord{LoadStartS: 1, LoadEndS: 3},
		Flows:  []result.FlowRate{{ID: 1, Direction: spec.ClientToServer, Mark: "BE"}, {ID: 2, Direction: spec.ServerToClient, Mark: "BK"}},
		Intervals: []result.LoadInterval{
			{StartS: 0, EndS: 1},
			{StartS: 1, EndS: 2, Loaded: true, UpBitsPerSecond: 8e6, DownBitsPerSecond: 0, Flows: []result.IntervalFlow{{ID: 1, BitsPerSecond: 8e6}, {ID: 2, BitsPerSecond: 0}}},
			{StartS: 2, EndS: 3, Loaded: true, UpBitsPerSecond: 4e6, DownBitsPerSecond: 6e6, Flows: []result.IntervalFlow{{ID: 1, BitsPerSecond: 4e6}, {ID: 2, BitsPerSecond: 6e6}}},
		},
	}
	up, down, flows := rrulThroughput(u, 1e6)
	if len(up) != 2 || up[0] != (plotter.XY{X: 1.5, Y: 8}) || up[1] != (plotter.XY{X: 2.5, Y: 4}) {
		t.Errorf("upload sum %v, want (1.5, 8) and (2.5, 4)", up)
	}
	if len(down) != 2 || down[0].Y != 0 || down[1].Y != 6 {
		t.Errorf("download sum %v, want 0 then 6", down)
	}
	if len(flows) != 2 || flows[0].name != "1 up BE" || !flows[0].up || flows[1].name != "2 down BK" || flows[1].up {
		t.Fatalf("flows %+v", flows)
	}
	if f := flows[1].xy; len(f) != 2 || f[0] != (plotter.XY{X: 1.5, Y: 0}) || f[1] != (plotter.XY{X: 2.5, Y: 6}) {
		t.Errorf("flow 2's line %v, want its 0 (starved) then 6", f)
	}
}
