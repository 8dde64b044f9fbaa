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
