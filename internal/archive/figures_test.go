package archive

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"wirespeed/internal/record"
	"wirespeed/internal/result"
)

// TestArchivedFigures: every figure of the registry that a result has
// reaches its archived row with the same value, for every recorded
// document of report's testdata (each test kind, CPU, a tradeoff,
// iperf3 peers) and for a run with no intervals (-i 0), whose RTT is
// its streams' at the window's end.
func TestArchivedFigures(t *testing.T) {
	files, _ := filepath.Glob("../report/testdata/*.json")
	kinds, _ := filepath.Glob("../report/testdata/kinds/*.json")
	files = append(files, kinds...)
	if len(files) < 10 {
		t.Fatalf("%d recorded documents, want report's testdata", len(files))
	}
	var docs []result.Document
	for _, f := range files {
		d, err := result.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	// -i 0: the same stream run without its intervals.
	noIntervals, err := result.ReadFile("../report/testdata/stream.json")
	if err != nil {
		t.Fatal(err)
	}
	noIntervals.Intervals = nil
	for i := range noIntervals.Directions {
		noIntervals.Directions[i].Intervals = nil
	}
	noIntervals.Started = noIntervals.Started.Add(1)
	docs = append(docs, noIntervals)
	if _, ok := record.RTT.Read(record.Of(&noIntervals.Result)); !ok {
		t.Fatal("a stream run without intervals has no RTT: its streams' TCP_INFO is not read")
	}

	ctx := context.Background()
	a := open(t, Target{Backend: SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	checked := 0
	var lastDoc int64
	for k, d := range docs {
		if added, err := a.Put(ctx, d); err != nil || !added.New {
			t.Fatalf("document %d: %+v, %v", k, added, err)
		}
		rows, err := a.Results(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		doc := record.Doc{Results: &docs[k]}
		for _, row := range rows {
			if row.DocumentID <= lastDoc {
				continue // an earlier document's
			}
			it, ok := doc.Find(row.At)
			if !ok {
				t.Fatalf("document %d: no result at %s", k, row.At)
			}
			for _, f := range record.Figures {
				want, has := f.Read(record.Of(it.Result))
				if !has {
					continue
				}
				checked++
				if got, ok := row.Figures.Get(f); !ok || got != want {
					t.Errorf("document %d (%s) %s: %s archived as %v (%v), the result has %v", k, d.Spec.Kind, row.At, f.Name, got, ok, want)
				}
			}
		}
		for _, row := range rows {
			lastDoc = max(lastDoc, row.DocumentID)
		}
	}
	if checked < 100 {
		t.Errorf("%d figures checked, want every recorded document's", checked)
	}
}

// TestLegacyFigures: a row archived before schema 4 (its figures in the
// columns of schemas 1 to 3, no figures column) reads back under the
// registry's names: local_cpu_pct as local_util_pct, local_sd as the
// service demand per transaction of a request/response test and per KB
// of a stream test, rtt_us and the latencies as they were.
func TestLegacyFigures(t *testing.T) {
	ctx := context.Background()
	a := open(t, Target{Backend: SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	for _, stmt := range []string{
		`INSERT INTO documents (sha256, kind, started_us, added_us, body) VALUES ('x', 'run', 0, 0, '')`,
		`INSERT INTO envs (sha256, body) VALUES ('y', '{}')`,
		`INSERT INTO results (document_id, path, started_us, command, test, source, destination, msg_size, settings, series,
			throughput_bps, latency_p50_us, local_cpu_pct, remote_cpu_pct, local_sd, remote_sd, iterations, iter_bps, iter_p50, limit_kind, title, labels, tool_version, env_id)
			SELECT d.id, 'matrix.rows[1].points[2]', 0, 'matrix', 'TCP_RR', 'A', 'B', 1, '', 's1', 8e5, 31, 40, 30, 80, 60, 1, '', '', '', '', '', 'old', e.id
			FROM documents d, envs e`,
		`INSERT INTO results (document_id, path, started_us, command, test, source, destination, msg_size, settings, series,
			throughput_bps, local_sd, rtt_us, iterations, iter_bps, iter_p50, limit_kind, title, labels, tool_version, env_id)
			SELECT d.id, 'runs[1]', 1, 'run', 'TCP_STREAM', 'A', 'B', 131072, '', 's2', 9e8, 0.5, 250, 1, '', '', '', '', '', 'old', e.id
			FROM documents d, envs e`,
	} {
		if _, err := a.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := a.Results(ctx, Filter{})
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v; want 2", len(rows), err)
	}
	for i, want := range []struct {
		at  record.Locator
		fig record.Values
	}{
		{record.Locator{Part: record.Matrix, Row: 1, Index: 2}, record.Values{record.Throughput.Name: 8e5, record.LatencyP50.Name: 31,
			record.LocalUtil.Name: 40, record.RemoteUtil.Name: 30, record.LocalDemandTr.Name: 80, record.RemoteDemandTr.Name: 60}},
		{record.Locator{Part: record.Runs, Index: 1}, record.Values{record.Throughput.Name: 9e8, record.LocalDemand.Name: 0.5, record.RTT.Name: 250}},
	} {
		if rows[i].At != want.at {
			t.Errorf("row %d at %+v, want %+v", i, rows[i].At, want.at)
		}
		if fmt.Sprint(rows[i].Figures) != fmt.Sprint(want.fig) {
			t.Errorf("row %d figures %v, want %v", i, rows[i].Figures, want.fig)
		}
	}
}
