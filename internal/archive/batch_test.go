package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"wirespeed/internal/record"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// TestPutBatch puts one batch on each back end: a TCP_RR run with
// every figure a row holds, a UDP run with loss, a mesh round of two
// pairs, the RR run again and a document already in the archive. Each
// column read back is checked against the value written into the
// document by hand, so that a column the batch's SQL puts in the wrong
// place (PostgreSQL writes a batch's rows as arrays) is caught.
func TestPutBatch(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		ctx := context.Background()
		a := open(t, target)
		old := synth(100, 5e8)
		if _, err := a.Put(ctx, old); err != nil {
			t.Fatal(err)
		}

		rr := Synthetic{Source: "A", Destination: "B", Started: t0, BitsPerSecond: 1e6, Labels: map[string]string{"k": "v"}}.Document()
		rr.Title = "rr run"
		rr.Spec.Kind, rr.Spec.RequestSize, rr.Spec.ResponseSize = spec.TCPRR, 64, 64
		rr.Summary.RRSummary = &result.RRSummary{Transactions: 100000, TransactionsPerSecond: 10000,
			Latency: stats.Latency{Count: 100000, P50: 50, P90: 70, P99: 120}}
		rr.Summary.LocalCPU = &measure.CPU{CPUs: 2, UtilPct: 40, ServiceDemandMicrosPerTransaction: 80}
		rr.Summary.RemoteCPU = &measure.CPU{CPUs: 2, UtilPct: 30, ServiceDemandMicrosPerTransaction: 60}
		lo, hi := 0.9e6, 1.1e6
		rr.Summary.Confidence = &result.Confidence{Iterations: 3, FigureConfidence: result.FigureConfidence{Lo: &lo, Hi: &hi}}
		rr.Iterations = []result.Iteration{
			{Index: 1, Summary: result.Summary{BitsPerSecond: 0.9e6, RRSummary: &result.RRSummary{Latency: stats.Latency{Count: 1, P50: 49}}}},
			{Index: 2, Summary: result.Summary{BitsPerSecond: 1.0e6, RRSummary: &result.RRSummary{Latency: stats.Latency{Count: 1, P50: 50}}}},
			{Index: 3, Summary: result.Summary{BitsPerSecond: 1.1e6, RRSummary: &result.RRSummary{Latency: stats.Latency{Count: 1, P50: 51}}}},
		}
		udp := Synthetic{Source: "A", Destination: "C", Started: t0.Add(time.Minute), BitsPerSecond: 2e8, SendSize: 1472}.Document()
		udp.Spec.Kind = spec.UDPStream
		udp.Summary.UDPSummary = &result.UDPSummary{PacketsSent: 1000, Lost: 15, LossPct: 1.5}
		p1 := Synthetic{Source: "h1", Destination: "h2", Started: t0.Add(2 * time.Minute), BitsPerSecond: 3e8, TSO: true}.Document().Result
		p2 := Synthetic{Source: "h2", Destination: "h1", Started: t0.Add(3 * time.Minute), BitsPerSecond: 4e8, TSO: false}.Document().Result
		mesh := result.MeshDocument{Schema: result.MeshSchema, Tool: result.Tool{Name: "wirespeed", Version: "synthetic"}, Command: "mesh",
			Spec: p1.Spec, Started: p1.Started, Pairs: []result.MeshPair{
				{Source: "h1", Destination: "h2", Via: result.ViaDirect, Result: &p1},
				{Source: "h2", Destination: "h1", Via: result.ViaRelay, Result: &p2},
				{Source: "h1", Destination: "h3", Error: "refused"},
			}}

		var ps []*Prepared
		for _, d := range []any{rr, udp, mesh, rr, old} {
			b, _ := json.Marshal(d)
			p, err := Prepare(b)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		added, err := a.PutPrepared(ctx, ps)
		if err != nil {
			t.Fatal(err)
		}
		want := []Added{{true, 1}, {true, 1}, {true, 2}, {false, 1}, {false, 1}}
		if diff := cmp.Diff(want, added); diff != "" {
			t.Errorf("added (-want +got):\n%s", diff)
		}

		rows, err := a.Results(ctx, Filter{Since: t0.Add(-time.Second), Until: t0.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		f := func(v float64) *float64 { return &v }
		wantRows := []Row{
			{Started: t0, Command: "run", Test: "TCP_RR", Source: "A", Destination: "B", MsgSize: 64, Settings: "response_size=64",
				Figures: record.Values{record.Throughput.Name: 1e6, record.LatencyP50.Name: 50, record.LatencyP90.Name: 70, record.LatencyP99.Name: 120,
					record.LocalUtil.Name: 40, record.RemoteUtil.Name: 30, record.LocalDemandTr.Name: 80, record.RemoteDemandTr.Name: 60}, CILo: f(0.9e6), CIHi: f(1.1e6),
				Iterations: 3, IterThroughput: []float64{0.9e6, 1.0e6, 1.1e6}, IterLatencyP50: []float64{49, 50, 51},
				LimitKind: "link", Title: "rr run", Labels: map[string]string{"k": "v"}, ToolVersion: "synthetic"},
			{Started: t0.Add(time.Minute), Command: "run", Test: "UDP_STREAM", Source: "A", Destination: "C", MsgSize: 1472,
				Figures: record.Values{record.Throughput.Name: 2e8, record.Loss.Name: 1.5}, Iterations: 1, LimitKind: "link", ToolVersion: "synthetic"},
			{At: record.Locator{Part: record.Pairs, Index: 0}, Started: t0.Add(2 * time.Minute), Command: "mesh", Test: "TCP_STREAM", Source: "h1", Destination: "h2", MsgSize: 131072,
				Figures: record.Values{record.Throughput.Name: 3e8}, Iterations: 1, LimitKind: "link", ToolVersion: "synthetic"},
			{At: record.Locator{Part: record.Pairs, Index: 1}, Started: t0.Add(3 * time.Minute), Command: "mesh", Test: "TCP_STREAM", Source: "h2", Destination: "h1", MsgSize: 131072,
				Settings: "via=relay", Figures: record.Values{record.Throughput.Name: 4e8}, Iterations: 1, LimitKind: "link", ToolVersion: "synthetic"},
		}
		for i := range wantRows {
			w := &wantRows[i]
			w.Series = record.SeriesKey(w.Source, w.Destination, w.Test, w.MsgSize, w.Settings)
		}
		envOf := map[string]Env{}
		ids := []int64{}
		for _, r := range rows {
			ids = append(ids, r.EnvID)
		}
		envs, err := a.Envs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			envOf[r.At.String()+r.Destination] = envs[r.EnvID]
		}
		if diff := cmp.Diff(wantRows, rows, cmp.Transformer("ids", func(r Row) Row {
			// The figures this test follows (TestArchivedFigures holds
			// the others).
			r.ID, r.DocumentID, r.EnvID = 0, 0, 0
			kept := record.Values{}
			for _, f := range []record.Figure{record.Throughput, record.LatencyP50, record.LatencyP90, record.LatencyP99, record.Loss,
				record.LocalUtil, record.RemoteUtil, record.LocalDemand, record.RemoteDemand, record.LocalDemandTr, record.RemoteDemandTr} {
				if v, ok := r.Figures.Get(f); ok {
					kept[f.Name] = v
				}
			}
			r.Figures = kept
			return r
		})); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
		// Each row refers to its own environment: the mesh's pairs
		// differ in TSO at their destination.
		tso := func(e Env) string {
			for _, f := range e.Remote {
				if f.Name == "tso" {
					return f.Value
				}
			}
			return ""
		}
		if got := tso(envOf["pairs[0]h2"]) + "," + tso(envOf["pairs[1]h1"]); got != "on,off" {
			t.Errorf("the mesh pairs' remote tso %s, want on,off", got)
		}
		if c, _ := a.Count(ctx); c.Documents != 4 || c.Results != 5 {
			t.Errorf("archive holds %+v, want 4 documents and 5 results", c)
		}
	})
}

// TestConcurrentBatches: writers putting batches that share documents,
// each batch in its own order, all at once. On PostgreSQL two such
// batches lock each other's documents; taken in one order they wait,
// taken in the batches' orders they would deadlock (and the server would
// abort one). Every document must be in once, and no put may fail.
func TestConcurrentBatches(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		const writers, docs, rounds = 4, 40, 3
		var all [][]byte
		for i := range docs * rounds {
			b, _ := json.Marshal(synth(i, 1e9+float64(i)))
			all = append(all, b)
		}
		// The documents' environment is in the archive already, so that
		// the batches do not queue on inserting it.
		if _, err := open(t, target).Put(context.Background(), synth(-1, 1e9)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, writers*rounds)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := Open(context.Background(), target)
				if err != nil {
					errs <- err
					return
				}
				defer a.Close()
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for r := range rounds {
					round := append([][]byte(nil), all[r*docs:(r+1)*docs]...)
					rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
					if _, err := a.PutMany(context.Background(), round); err != nil {
						errs <- fmt.Errorf("writer %d round %d: %w", w, r, err)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		c, err := open(t, target).Count(context.Background())
		if err != nil || c.Documents != docs*rounds+1 || c.Results != docs*rounds+1 {
			t.Errorf("archive holds %+v, %v; want %d of each", c, err, docs*rounds+1)
		}
	})
}

// TestPrepareDocument: a document prepared from the value a command
// holds is the one prepared from its JSON (what import and flush read):
// the same digest, body, rows and environments, for every kind of
// document, recorded runs among them; and the value is left as it was
// (its strings are escaped in the rows, not in it).
func TestPrepareDocument(t *testing.T) {
	var docs []any
	files, _ := filepath.Glob("../report/testdata/*.json")
	for _, f := range files {
		d, err := result.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	if len(docs) < 5 {
		t.Fatalf("%d recorded documents in ../report/testdata, want the run, rr, udp, tradeoff ones", len(docs))
	}
	run := Synthetic{Source: "A\x1b[2J", Destination: "B", Started: t0, BitsPerSecond: 1e9, Labels: map[string]string{"k": "v\u202e"}}.Document()
	sweep := run
	sweep.Result = result.Result{}
	sweep.Points = []result.Point{{MsgSize: 1024, Result: run.Result}, {MsgSize: 65536, Result: run.Result}}
	matrix := run
	matrix.Result = result.Result{}
	matrix.Matrix = &result.Matrix{Rows: []result.MatrixRow{{Index: 1, Label: "tso=off", Points: []result.Point{{MsgSize: 1024, Result: run.Result}}}}}
	mesh := result.MeshDocument{Schema: result.MeshSchema, Command: "mesh", Pairs: []result.MeshPair{{Source: "h1", Destination: "h2", Result: &run.Result}}}
	live := run
	live.Started = time.Now() // a monotonic reading and the local zone, as a run's
	docs = append(docs, run, live, &sweep, matrix, mesh, &mesh)
	for i, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Prepare(b)
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var rd record.Doc
		switch d := d.(type) {
		case result.Document:
			rd.Results = &d
		case *result.Document:
			rd.Results = d
		case result.MeshDocument:
			rd.Mesh = &d
		case *result.MeshDocument:
			rd.Mesh = d
		}
		got, gb, err := PrepareDocument(rd)
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		if string(gb) != string(b) {
			t.Errorf("document %d: PrepareDocument's JSON differs from json.Marshal's", i)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Prepared{}, extracted{})); diff != "" {
			t.Errorf("document %d: prepared from the value (-from JSON +from value):\n%s", i, diff)
		}
	}
	if run.Labels["k"] != "v\u202e" || run.Result.Local.Hostname != "A\x1b[2J" {
		t.Errorf("the document's strings were changed: %q, %q", run.Labels, run.Result.Local.Hostname)
	}
	if _, _, err := PrepareDocument(record.Doc{Results: &result.Document{Schema: result.Schema, Command: "run"}}); !errors.Is(err, ErrNotResult) {
		t.Errorf("a document with no result: %v, want ErrNotResult", err)
	}
}
