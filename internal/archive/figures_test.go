package archive

import (
	"context"
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
