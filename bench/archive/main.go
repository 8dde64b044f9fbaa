// Command archive measures the archive at scale: it fills an archive
// with generated results (-n, default one million, in -series series)
// through the path `archive import` takes (PutMany, -batch documents a
// transaction), then measures, on the full archive, inserting results
// one at a time as a run writes its result (PutJSON: one document, its
// own transaction), in batches as import and flush write them, from
// several writers at once, and one series' history: the query, the
// series and its change points, as `wirespeed history --pair --size`
// makes them.
//
//	go run ./bench/archive -archive /tmp/bench.db
//	go run ./bench/archive -archive postgres://USER:PASSWORD@127.0.0.1/bench
//
// Beside each insert rate it prints the CPU time an insert took: this
// process's (the database's too, for SQLite, which runs in it) and, for
// a PostgreSQL server on this host, the server's processes' (read from
// /proc for the backends pg_stat_activity lists), which on a shared
// machine say more than the wall clock.
//
// Filling a million results takes minutes; the archive is kept, and a
// second run with the same -n skips the fill.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"wirespeed/internal/archive"
	"wirespeed/internal/history"
	"wirespeed/internal/record"
	"wirespeed/internal/result"
)

func main() {
	target := flag.String("archive", "", "the archive to fill: a SQLite FILE or a postgres:// URL (required)")
	n := flag.Int("n", 1_000_000, "results to generate")
	nseries := flag.Int("series", 1000, "series they are spread over")
	batch := flag.Int("batch", 1000, "results per transaction while filling")
	inserts := flag.Int("inserts", 2000, "results to insert one at a time, and again in batches, for the insert rates")
	keeps := flag.Int("keeps", 200, "results to insert as a run does (open the archive, put one, close it)")
	insertBatch := flag.Int("insert-batch", 100, "documents per transaction for the batched insert rate")
	queries := flag.Int("queries", 21, "series histories to time")
	writers := flag.Int("writers", 8, "concurrent writers for the concurrent insert rate (each its own connections, as several runs or mesh runners)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the one-at-a-time inserts to `FILE`")
	doc := flag.String("doc", "", "insert copies of this results document `FILE` (each started a second after the one before) instead of generated ones: "+
		"a real run's document is some 20 times a generated one's size")
	flag.Parse()
	b := bench{target: *target, n: *n, nseries: *nseries, batch: *batch, inserts: *inserts, insertBatch: *insertBatch,
		queries: *queries, writers: *writers, cpuprofile: *cpuprofile, keeps: *keeps}
	spoolDir, err := os.MkdirTemp("", "bench-archive-spool")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/archive:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(spoolDir)
	b.spoolDir = spoolDir
	if *doc != "" {
		d, err := result.ReadFile(*doc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/archive:", err)
			os.Exit(1)
		}
		b.template = &d
	}
	if err := b.run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/archive:", err)
		os.RemoveAll(spoolDir)
		os.Exit(1)
	}
}

type bench struct {
	target                                                    string
	n, nseries, batch, inserts, insertBatch, queries, writers int
	cpuprofile                                                string
	template                                                  *result.Document
	keeps                                                     int
	spoolDir                                                  string
}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// synth is result i of the generated set: series i%nseries, one hour
// after the series' previous result, throughput 941 Mbit/s with 1% noise
// and a step down to 612 with TSO off at B two thirds of the way.
func synth(rng *rand.Rand, i, n, nseries int) []byte {
	b, _ := json.Marshal(synthDoc(rng, i, n, nseries))
	return b
}

func marshalAll(docs []result.Document) [][]byte {
	out := make([][]byte, len(docs))
	for i, d := range docs {
		out[i], _ = json.Marshal(d)
	}
	return out
}

// synthDoc is synth's document.
func synthDoc(rng *rand.Rand, i, n, nseries int) result.Document {
	s := i % nseries
	k := i / nseries
	perSeries := max(n/nseries, 1)
	bps, tso := 941e6, true
	if k > perSeries*2/3 {
		bps, tso = 612e6, false
	}
	return archive.Synthetic{
		Source: fmt.Sprintf("h%03d", s%40), Destination: fmt.Sprintf("h%03d", 40+s/40),
		SendSize: 1024 << (s % 5), Started: t0.Add(time.Duration(k) * time.Hour).Add(time.Duration(s) * time.Second),
		BitsPerSecond: bps * (1 + 0.01*rng.NormFloat64()), TSO: tso,
	}.Document()
}

func (b bench) run() error {
	if b.target == "" {
		return fmt.Errorf("give -archive FILE or -archive postgres://URL")
	}
	t, err := archive.ParseTarget(b.target)
	if err != nil {
		return err
	}
	ctx := context.Background()
	a, err := archive.Open(ctx, t)
	if err != nil {
		return err
	}
	defer a.Close()
	server := newServerCPU(ctx, t)
	defer server.close()
	rng := rand.New(rand.NewPCG(1, 2))
	c, err := a.Count(ctx)
	if err != nil {
		return err
	}
	if have := int(c.Results); have < b.n {
		start, cpu0, scpu0 := time.Now(), cpuTime(), server.cpu(ctx)
		docs := make([][]byte, 0, b.batch)
		for i := have; i < b.n; i++ {
			docs = append(docs, synth(rng, i, b.n, b.nseries))
			if len(docs) == b.batch || i == b.n-1 {
				if _, err := a.PutMany(ctx, docs); err != nil {
					return err
				}
				docs = docs[:0]
			}
			if (i+1)%100000 == 0 {
				fmt.Fprintf(os.Stderr, "filled %d results, %.0f/s\n", i+1, float64(i+1-have)/time.Since(start).Seconds())
			}
		}
		m := b.n - have
		fmt.Printf("fill: %d results through PutMany in batches of %d: %s\n", m, b.batch, rate(m, time.Since(start), cpuTime()-cpu0, server.since(ctx, scpu0)))
	}
	c, _ = a.Count(ctx)
	fmt.Printf("archive %s: %d documents, %d results\n", t, c.Documents, c.Results)
	// Generated documents past those in the archive, so that a second
	// run of the bench inserts new ones. They are made before each
	// measurement, so that only the archive is timed.
	next := max(b.n, int(c.Results))
	gen := func(k int) []result.Document {
		docs := make([]result.Document, k)
		for i := range docs {
			if b.template != nil {
				docs[i] = *b.template
				docs[i].Started = docs[i].Started.Add(time.Duration(next+i) * time.Second)
			} else {
				docs[i] = synthDoc(rng, next+i, b.n, b.nseries)
			}
		}
		next += k
		return docs
	}
	if js, _ := json.Marshal(gen(1)[0]); true {
		fmt.Printf("documents inserted: %d bytes of JSON each\n", len(js))
	}

	// As a run archives its result: Spool.Keep opens the archive, writes
	// what its spool holds (nothing here), puts the document in a
	// transaction of its own, and closes the archive.
	docs := gen(b.keeps)
	spool := archive.Spool{Dir: b.spoolDir}
	start, cpu0, scpu0 := time.Now(), cpuTime(), server.cpu(ctx)
	for _, d := range docs {
		k, err := spool.Keep(ctx, t, record.Doc{Results: &d})
		if err != nil || k.ArchiveErr != nil || !k.Added.New {
			return fmt.Errorf("keep: %+v, %v", k, err)
		}
	}
	fmt.Printf("insert as a run does (Spool.Keep: open, flush, put, close): %s\n", rate(len(docs), time.Since(start), cpuTime()-cpu0, server.since(ctx, scpu0)))

	// One at a time on an open archive, each its own transaction (a
	// command that archives several documents: a mesh --every round
	// after round, the exporter's probes).
	docs = gen(b.inserts)
	if b.cpuprofile != "" {
		f, err := os.Create(b.cpuprofile)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
	}
	start, cpu0, scpu0 = time.Now(), cpuTime(), server.cpu(ctx)
	for _, d := range docs {
		if _, err := a.Put(ctx, d); err != nil {
			pprof.StopCPUProfile()
			return err
		}
	}
	el, cpu, scpu := time.Since(start), cpuTime()-cpu0, server.since(ctx, scpu0)
	pprof.StopCPUProfile()
	fmt.Printf("insert one at a time on an open archive (Put, a transaction each): %s\n", rate(b.inserts, el, cpu, scpu))

	// One at a time from JSON (PutJSON, a transaction each): what the
	// bench measured before Put took a document's value.
	js := marshalAll(gen(b.inserts))
	start, cpu0, scpu0 = time.Now(), cpuTime(), server.cpu(ctx)
	for _, j := range js {
		if _, err := a.PutJSON(ctx, j); err != nil {
			return err
		}
	}
	fmt.Printf("insert one at a time from JSON (PutJSON, a transaction each): %s\n", rate(b.inserts, time.Since(start), cpuTime()-cpu0, server.since(ctx, scpu0)))

	// In batches from JSON, as archive import and flush write files.
	js = marshalAll(gen(b.inserts))
	start, cpu0, scpu0 = time.Now(), cpuTime(), server.cpu(ctx)
	for i := 0; i < len(js); i += b.insertBatch {
		if _, err := a.PutMany(ctx, js[i:min(i+b.insertBatch, len(js))]); err != nil {
			return err
		}
	}
	fmt.Printf("insert in batches of %d from JSON (PutMany, as import): %s\n", b.insertBatch, rate(b.inserts, time.Since(start), cpuTime()-cpu0, server.since(ctx, scpu0)))

	// One at a time from several writers at once, each with its archive
	// opened on its own, as runs and mesh runners on several hosts are.
	if b.writers > 1 {
		per := b.inserts / b.writers
		docs := make([][]result.Document, b.writers)
		for w := range docs {
			docs[w] = gen(per)
		}
		archives := make([]*archive.Archive, b.writers)
		for w := range archives {
			if archives[w], err = archive.Open(ctx, t); err != nil {
				return err
			}
			defer archives[w].Close()
		}
		var wg sync.WaitGroup
		errs := make(chan error, b.writers)
		start, cpu0, scpu0 := time.Now(), cpuTime(), server.cpu(ctx)
		for w := range b.writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, d := range docs[w] {
					if _, err := archives[w].Put(ctx, d); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
		fmt.Printf("insert one at a time from %d writers at once (Put): %s\n", b.writers, rate(per*b.writers, time.Since(start), cpuTime()-cpu0, server.since(ctx, scpu0)))
	}

	// One series' history, for several series: the query alone, and the
	// query with the series and its change points.
	series, err := a.Series(ctx, archive.Filter{Source: "h007", Destination: "h040"})
	if err != nil || len(series) == 0 {
		return fmt.Errorf("no series to query: %v", err)
	}
	var qd, hd []time.Duration
	points := 0
	cpu0 = cpuTime()
	for q := 0; q < b.queries; q++ {
		key := series[q%len(series)].Key
		start := time.Now()
		rows, err := a.Results(ctx, archive.Filter{Series: key})
		if err != nil {
			return err
		}
		qd = append(qd, time.Since(start))
		ss := history.Build(rows, history.Figures[0])
		envs, err := a.Envs(ctx, history.EnvIDs(ss))
		if err != nil {
			return err
		}
		for i := range ss {
			if err := ss[i].FindChanges(history.Options{Alpha: 0.01}, envs); err != nil {
				return err
			}
		}
		hd = append(hd, time.Since(start))
		points = len(rows)
	}
	hcpu := (cpuTime() - cpu0) / time.Duration(b.queries)
	slices.Sort(qd)
	slices.Sort(hd)
	fmt.Printf("history of one series (%d points), %d series: query median %v (max %v); with change points median %v (max %v); this process's CPU %v per history\n",
		points, b.queries, qd[len(qd)/2].Round(time.Microsecond), qd[len(qd)-1].Round(time.Microsecond),
		hd[len(hd)/2].Round(time.Microsecond), hd[len(hd)-1].Round(time.Microsecond), hcpu.Round(time.Microsecond))
	return nil
}

// rate prints k results in el with the CPU they took: this process's
// and, when known, the PostgreSQL server's (negative: unknown).
func rate(k int, el, cpu, server time.Duration) string {
	s := fmt.Sprintf("%d results in %.2f s: %.0f/s; this process's CPU %.0f µs a result", k, el.Seconds(), float64(k)/el.Seconds(),
		float64(cpu.Microseconds())/float64(k))
	if server >= 0 {
		s += fmt.Sprintf(", the server's %.0f µs (together %.0f results per CPU second)", float64(server.Microseconds())/float64(k),
			float64(k)/(cpu+server).Seconds())
	} else {
		s += fmt.Sprintf(" (%.0f results per CPU second)", float64(k)/cpu.Seconds())
	}
	return s
}

// serverCPU reads the CPU time of a PostgreSQL server's processes on
// this host: every process pg_stat_activity lists (the client
// backends, the WAL writer, the checkpointer, ...), from /proc.
type serverCPU struct{ db *sql.DB }

func newServerCPU(ctx context.Context, t archive.Target) serverCPU {
	if t.Backend != archive.Postgres {
		return serverCPU{}
	}
	db, err := sql.Open("pgx", t.URL.String())
	if err != nil {
		return serverCPU{}
	}
	db.SetMaxOpenConns(1)
	return serverCPU{db: db}
}

func (s serverCPU) close() {
	if s.db != nil {
		s.db.Close()
	}
}

// cpu is each server process's CPU time by its pid; nil when unknown
// (SQLite, or a server on another host).
func (s serverCPU) cpu(ctx context.Context) map[int]time.Duration {
	if s.db == nil {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[int]time.Duration{}
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			return nil
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil // not on this host, or not ours to read
		}
		// utime and stime are the 14th and 15th fields, counted after
		// the command name's closing parenthesis.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return nil
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = time.Duration(u+st) * time.Second / clockTicks
	}
	return out
}

// since is the server's CPU time since before (processes that started
// since count whole; those that ended are lost); -1 when unknown.
func (s serverCPU) since(ctx context.Context, before map[int]time.Duration) time.Duration {
	after := s.cpu(ctx)
	if before == nil || after == nil {
		return -1
	}
	var d time.Duration
	for pid, t := range after {
		d += t - before[pid]
	}
	return d
}
