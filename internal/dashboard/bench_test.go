package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"wirespeed/internal/archive"
)

// BenchmarkGridRender50x50 serves a 50 x 50 mesh (2,450 pairs, three
// rounds each) and loads its grid in headless chromium, reporting what
// the browser's Performance API measured of each load (the grid cached
// by the server after the first): response_ms from the request to the
// last byte of the page, render_ms from then to the load event (parse,
// style, layout of the 2,450 cells), load_ms the whole, and
// renderer_cpu_ms the renderer's main-thread CPU time per load, the
// figure to judge a change by on a busy machine. Run it with
//
//	go test ./internal/dashboard -run '^$' -bench GridRender50x50 -benchtime 5x
func BenchmarkGridRender50x50(b *testing.B) {
	a := openArchive(b)
	var docs [][]byte
	for round := range 3 {
		for i := range 50 {
			for j := range 50 {
				if i == j {
					continue
				}
				d := archive.Synthetic{Source: fmt.Sprintf("host%02d", i), Destination: fmt.Sprintf("host%02d", j),
					Started: t0.Add(time.Duration(round) * time.Hour), BitsPerSecond: float64(900+i+j+round) * 1e6, TSO: true}.Document()
				buf, err := jsonOf(d)
				if err != nil {
					b.Fatal(err)
				}
				docs = append(docs, buf)
			}
		}
	}
	if _, err := a.PutMany(b.Context(), docs); err != nil {
		b.Fatal(err)
	}
	ts := serve(b, a)
	ctx := browserB(b)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid"))); err != nil {
		b.Fatal(err)
	}
	// The renderer's main-thread CPU time for the page
	// (Performance.getMetrics' ThreadTime) is what it cost the browser
	// whatever else the machine runs; the Performance API's times are
	// wall times, and on a busy machine they include waiting for a CPU.
	if _, err := chromedp.Call(ctx, performance.Enable, performance.EnableParams{}); err != nil {
		b.Fatal(err)
	}
	threadTime := func() float64 {
		r, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range r.Metrics {
			if m.Name == "ThreadTime" {
				return m.Value
			}
		}
		b.Fatal("no ThreadTime among the browser's performance metrics")
		return 0
	}
	var resp, render, load, cpu float64
	b.ResetTimer()
	for range b.N {
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid"))); err != nil {
			b.Fatal(err)
		}
		m, err := chromedp.Run(ctx, chromedp.Poll[[]float64](`(n => n && n.loadEventEnd > 0 && document.querySelectorAll("a.half").length === 2450 ? [n.requestStart, n.responseEnd, n.loadEventEnd] : null)(performance.getEntriesByType("navigation")[0])`))
		if err != nil {
			b.Fatal(err)
		}
		// (ThreadTime starts again with each document: after the load
		// it is the new page's.)
		cpu += 1000 * threadTime()
		resp += m[1] - m[0]
		render += m[2] - m[1]
		load += m[2]
	}
	n := float64(b.N)
	b.ReportMetric(resp/n, "response_ms")
	b.ReportMetric(render/n, "render_ms")
	b.ReportMetric(load/n, "load_ms")
	b.ReportMetric(cpu/n, "renderer_cpu_ms")
}
