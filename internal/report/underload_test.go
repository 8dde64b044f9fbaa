package report

import (
	"bytes"
	"strings"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

func rrulPoint(idle, loaded, p99 float64) result.Point {
	var p result.Point
	p.Spec = spec.Test{Kind: spec.RRUL}
	p.MsgSize = 131072
	p.Summary.UnderLoad = &result.UnderLoad{
		Idle:   result.Phase{All: result.Latency{P50Ms: idle, Samples: 100}},
		Loaded: result.Phase{All: result.Latency{P50Ms: loaded, P99Ms: p99, Samples: 400}},
	}
	return p
}

// TestSweepRRULColumns: a sweep of RRUL has the idle and loaded latency
// columns, each row its point's figures in them, last.
func TestSweepRRULColumns(t *testing.T) {
	var b bytes.Buffer
	doc := result.Document{Points: []result.Point{rrulPoint(0.12, 143.4, 247), rrulPoint(0.2, 13.04, 24.5)}}
	doc.Spec.Kind = spec.RRUL
	SweepTable(&b, doc, true)
	lines := strings.Split(b.String(), "\n")
	if f := strings.Fields(lines[0]); f[len(f)-3] != "Idle" || f[len(f)-1] != "Loaded" {
		t.Errorf("header %q", lines[0])
	}
	var rows [][]string
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "0 ") {
			rows = append(rows, strings.Fields(l))
		}
	}
	want := [][]string{{"0.1", "143", "247"}, {"0.2", "13", "24"}}
	if len(rows) != 2 {
		t.Fatalf("rows %q\n%s", rows, b.String())
	}
	for i, r := range rows {
		if got := r[len(r)-3:]; strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("row %d ends %q, want %q", i, got, want[i])
		}
	}
}

// TestUnderLoadLine: the answer line as the issue words it, from
// hand-made figures.
func TestUnderLoadLine(t *testing.T) {
	u := &result.UnderLoad{Load: spec.LoadBoth,
		Idle:              result.Phase{All: result.Latency{P50Ms: 0.12, Samples: 100}},
		Loaded:            result.Phase{All: result.Latency{P50Ms: 61.2, P99Ms: 82.3, Samples: 400}},
		IncreaseMs:        61.08,
		UpBitsPerSecond:   19.1e6,
		DownBitsPerSecond: 18.6e6,
		ResponsivenessRPM: 980.4,
	}
	if got, want := UnderLoadLine(u), "idle 0.1 ms, loaded 61 ms (+61 ms, p99 82 ms); 18.6 down, 19.1 up Mbit/s; responsiveness 980 RPM"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	u.Load = spec.LoadUp
	if got := UnderLoadLine(u); !strings.Contains(got, "; 19.1 up Mbit/s;") {
		t.Errorf("up only: %s", got)
	}
}
