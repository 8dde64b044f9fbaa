// Command archive measures the archive at scale: it fills an archive
// with generated results (-n, default one million, in -series series),
// then measures inserting results one at a time, as runs do (each its
// own transaction), and one series' history: the query, the series and
// its change points, as `wirespeed history --pair --size` makes them.
//
//	go run ./bench/archive -archive /tmp/bench.db
//	go run ./bench/archive -archive postgres://USER:PASSWORD@127.0.0.1/bench
//
// Filling a million results takes minutes; -keep leaves the archive for
// another run of the measurements (-n 0 then skips the fill).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"wirespeed/internal/archive"
	"wirespeed/internal/history"
)

func main() {
	target := flag.String("archive", "", "the archive to fill: a SQLite FILE or a postgres:// URL (required)")
	n := flag.Int("n", 1_000_000, "results to generate")
	nseries := flag.Int("series", 1000, "series they are spread over")
	batch := flag.Int("batch", 1000, "results per transaction while filling")
	inserts := flag.Int("inserts", 2000, "results to insert one at a time for the insert rate")
	queries := flag.Int("queries", 21, "series histories to time")
	writers := flag.Int("writers", 8, "concurrent writers for the concurrent insert rate (each its own connections, as several runs or mesh runners)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if err := run(*target, *n, *nseries, *batch, *inserts, *queries, *writers); err != nil {
		fmt.Fprintln(os.Stderr, "bench/archive:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// synth is result i of the generated set: series i%nseries, one hour
// after the series' previous result, throughput 941 Mbit/s with 1% noise
// and a step down to 612 with TSO off at B two thirds of the way.
func synth(rng *rand.Rand, i, n, nseries int) []byte {
	s := i % nseries
	k := i / nseries
	perSeries := max(n/nseries, 1)
	bps, tso := 941e6, true
	if k > perSeries*2/3 {
		bps, tso = 612e6, false
	}
	d := archive.Synthetic{
		Source: fmt.Sprintf("h%03d", s%40), Destination: fmt.Sprintf("h%03d", 40+s/40),
		SendSize: 1024 << (s % 5), Started: t0.Add(time.Duration(k) * time.Hour).Add(time.Duration(s) * time.Second),
		BitsPerSecond: bps * (1 + 0.01*rng.NormFloat64()), TSO: tso,
	}.Document()
	b, _ := json.Marshal(d)
	return b
}

func run(target string, n, nseries, batch, inserts, queries, writers int) error {
	if target == "" {
		return fmt.Errorf("give -archive FILE or -archive postgres://URL")
	}
	t, err := archive.ParseTarget(target)
	if err != nil {
		return err
	}
	ctx := context.Background()
	a, err := archive.Open(ctx, t)
	if err != nil {
		return err
	}
	defer a.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	c, err := a.Count(ctx)
	if err != nil {
		return err
	}
	if c.Results < int64(n) {
		start := time.Now()
		docs := make([][]byte, 0, batch)
		for i := int(c.Results); i < n; i++ {
			docs = append(docs, synth(rng, i, n, nseries))
			if len(docs) == batch || i == n-1 {
				if _, err := a.PutMany(ctx, docs); err != nil {
					return err
				}
				docs = docs[:0]
			}
			if (i+1)%100000 == 0 {
				fmt.Fprintf(os.Stderr, "filled %d results, %.0f/s\n", i+1, float64(i+1-int(c.Results))/time.Since(start).Seconds())
			}
		}
		fmt.Printf("fill: %d results in %.1f s (%.0f results/s, batches of %d)\n", n-int(c.Results), time.Since(start).Seconds(),
			float64(n-int(c.Results))/time.Since(start).Seconds(), batch)
	}
	c, _ = a.Count(ctx)
	fmt.Printf("archive %s: %d documents, %d results\n", t, c.Documents, c.Results)

	// Inserts one at a time, each its own transaction, as a run's. The
	// documents are made first, so that only the archive is timed. The
	// CPU time is this process's (the database's too, for SQLite):
	// results per CPU second do not depend on what else the machine ran.
	docs := make([][]byte, inserts)
	for i := range docs {
		docs[i] = synth(rng, n+i, n, nseries)
	}
	start, cpu0 := time.Now(), cpuTime()
	_ = cpu0
	for _, d := range docs {
		if _, err := a.PutJSON(ctx, d); err != nil {
			return err
		}
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	fmt.Printf("insert: %d results one at a time in %.2f s: %.0f results/s; %.2f s of this process's CPU: %.0f results per CPU second\n",
		inserts, el.Seconds(), float64(inserts)/el.Seconds(), cpu.Seconds(), float64(inserts)/cpu.Seconds())

	// The same from several writers at once, each with its archive
	// opened on its own, as runs and mesh runners on several hosts are.
	if writers > 1 {
		per := inserts / writers
		docs := make([][][]byte, writers)
		for w := range docs {
			for i := 0; i < per; i++ {
				docs[w] = append(docs[w], synth(rng, n+inserts+w*per+i, n, nseries))
			}
		}
		archives := make([]*archive.Archive, writers)
		for w := range archives {
			if archives[w], err = archive.Open(ctx, t); err != nil {
				return err
			}
			defer archives[w].Close()
		}
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		start := time.Now()
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, d := range docs[w] {
					if _, err := archives[w].PutJSON(ctx, d); err != nil {
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
		el := time.Since(start)
		fmt.Printf("insert: %d results from %d writers at once in %.2f s: %.0f results/s\n", per*writers, writers, el.Seconds(), float64(per*writers)/el.Seconds())
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
	for q := 0; q < queries; q++ {
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
	hcpu := (cpuTime() - cpu0) / time.Duration(queries)
	slices.Sort(qd)
	slices.Sort(hd)
	fmt.Printf("history of one series (%d points), %d series: query median %v (max %v); with change points median %v (max %v); this process's CPU %v per history\n",
		points, queries, qd[len(qd)/2].Round(time.Microsecond), qd[len(qd)-1].Round(time.Microsecond),
		hd[len(hd)/2].Round(time.Microsecond), hd[len(hd)-1].Round(time.Microsecond), hcpu.Round(time.Microsecond))
	return nil
}
