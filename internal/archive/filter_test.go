package archive

import (
	"context"
	"math"
	"testing"
	"time"
	"wirespeed/internal/record"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// TestFilter puts five results of known hosts and times and checks
// which each filter selects, by hand: Since includes its instant, Until
// excludes it, Source and Destination match their own column.
func TestFilter(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		ctx := context.Background()
		a := open(t, target)
		hosts := [][2]string{{"A", "B"}, {"A", "B"}, {"A", "B"}, {"B", "A"}, {"C", "B"}}
		for i, h := range hosts {
			doc := Synthetic{Source: h[0], Destination: h[1], Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: float64(i+1) * 1e8}.Document()
			if _, err := a.Put(ctx, doc); err != nil {
				t.Fatal(err)
			}
		}
		// Each result is told by its throughput: (i+1)·1e8.
		tests := []struct {
			name string
			f    Filter
			want []float64
		}{
			{"all", Filter{}, []float64{1e8, 2e8, 3e8, 4e8, 5e8}},
			{"since, inclusive", Filter{Since: t0.Add(time.Hour)}, []float64{2e8, 3e8, 4e8, 5e8}},
			{"until, exclusive", Filter{Until: t0.Add(2 * time.Hour)}, []float64{1e8, 2e8}},
			{"one hour", Filter{Since: t0.Add(time.Hour), Until: t0.Add(2 * time.Hour)}, []float64{2e8}},
			{"source", Filter{Source: "B"}, []float64{4e8}},
			{"destination", Filter{Destination: "A"}, []float64{4e8}},
			{"source and destination", Filter{Source: "A", Destination: "B"}, []float64{1e8, 2e8, 3e8}},
			{"series", Filter{Series: record.SeriesKey("C", "B", "TCP_STREAM", 131072, "")}, []float64{5e8}},
			{"test", Filter{Test: "TCP_RR"}, nil},
		}
		for _, tt := range tests {
			rows, err := a.Results(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, r := range rows {
				got = append(got, r.Figures[record.Throughput.Name])
			}
			if len(got) != len(tt.want) {
				t.Errorf("%s: selected %v, want %v", tt.name, got, tt.want)
				continue
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("%s: selected %v, want %v", tt.name, got, tt.want)
					break
				}
			}
		}
	})
}

// TestRowOfRR archives a TCP_RR result and checks its row against the
// result's own figures: each percentile in its column, and the service
// demand per transaction (a request/response test's), not per KB.
func TestRowOfRR(t *testing.T) {
	doc := Synthetic{Source: "A", Destination: "B", Started: t0, BitsPerSecond: 1e6}.Document()
	doc.Spec.Kind, doc.Spec.RequestSize, doc.Spec.ResponseSize = spec.TCPRR, 1, 1
	doc.Summary.RRSummary = &result.RRSummary{Transactions: 100000, TransactionsPerSecond: 10000,
		Latency: stats.Latency{Count: 100000, Min: 40, Mean: 55, P50: 50, P90: 70, P99: 120, P999: 300, Max: 900}}
	doc.Summary.LocalCPU = &measure.CPU{CPUs: 2, UtilPct: 40, ServiceDemandMicrosPerKB: 999, ServiceDemandMicrosPerTransaction: 80}
	rows, err := rowsOf(record.Doc{Results: &doc})
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v, %v; want one", rows, err)
	}
	r := rows[0]
	for _, f := range []struct {
		name string
		got  *float64
		want float64
	}{{"p50", fig(r.Row, record.LatencyP50), 50}, {"p90", fig(r.Row, record.LatencyP90), 70}, {"p99", fig(r.Row, record.LatencyP99), 120},
		{"local cpu", fig(r.Row, record.LocalUtil), 40}, {"local service demand", fig(r.Row, record.LocalDemandTr), 80}} {
		if f.got == nil || math.Abs(*f.got-f.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", f.name, f.got, f.want)
		}
	}
	if r.MsgSize != 1 || r.Test != "TCP_RR" {
		t.Errorf("test %s of %d bytes, want TCP_RR of the 1-byte request", r.Test, r.MsgSize)
	}
}
