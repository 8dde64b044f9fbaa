package history

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"wirespeed/internal/archive"
	"wirespeed/internal/record"
	"wirespeed/internal/stats"
)

// TestLoad: Load over an archive follows each test's default figure
// (throughput for TCP_STREAM, p50 for TCP_RR), keeps only the asked
// size, finds the TSO change of the stream series with what changed,
// and with Latest keeps, of each pair, the series measured last.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	a, err := archive.Open(ctx, archive.Target{Backend: archive.SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	docs := tsoSeries(10)
	for i := range 5 {
		docs = append(docs, archive.Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(30+i) * time.Hour),
			BitsPerSecond: 1e5, Latency: &stats.Latency{Count: 1000, P50: 30 + float64(i)}, TSO: true})
	}
	for _, d := range docs {
		if _, err := a.Put(ctx, d.Document()); err != nil {
			t.Fatal(err)
		}
	}
	series, rows, envs, err := Load(ctx, a, Query{Size: 131072, Options: Options{Alpha: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range series {
		got = append(got, fmt.Sprintf("%s %d %s %d", s.Key.Test, s.Key.MsgSize, s.Figure, len(s.Points)))
	}
	if fmt.Sprint(got) != "[TCP_STREAM 131072 throughput 22]" {
		t.Errorf("series %v, want the stream series at 131072 alone (the TCP_RR's size is 1)", got)
	}
	if len(rows) != 22 || len(envs) == 0 {
		t.Errorf("%d rows, %d environments; want the 22 stream results' and their environments", len(rows), len(envs))
	}
	if len(series) == 1 && (len(series[0].Changes) != 1 || series[0].Changes[0].Index != 12 || len(series[0].Changes[0].Env) == 0) {
		t.Errorf("changes %+v, want the one at point 12 (TSO off from there) with what changed", series[0].Changes)
	}

	series, _, _, err = Load(ctx, a, Query{Options: Options{Alpha: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range series {
		got = append(got, fmt.Sprintf("%s %d %s %d", s.Key.Test, s.Key.MsgSize, s.Figure, len(s.Points)))
	}
	if fmt.Sprint(got) != "[TCP_STREAM 131072 throughput 22 TCP_STREAM 1460 throughput 10 TCP_RR 1 p50 5]" {
		t.Errorf("series %v, want each test's default figure", got)
	}

	series, _, _, err = Load(ctx, a, Query{Figures: []Figure{record.Throughput}, Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 1 || series[0].Key.Test != "TCP_RR" {
		t.Errorf("latest series %+v, want A->B's TCP_RR, measured last", series)
	}
}
