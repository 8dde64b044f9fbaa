package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"wirespeed/internal/archive"
	"wirespeed/internal/stats"
)

// The browser tests drive Debian's chromium (headless) against the
// dashboard serving a seeded SQLite archive.

var t0 = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

func openArchive(t testing.TB) *archive.Archive {
	t.Helper()
	a, err := archive.Open(context.Background(), archive.Target{Backend: archive.SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func put(t testing.TB, a *archive.Archive, s archive.Synthetic, title string) {
	t.Helper()
	d := s.Document()
	d.Title = title
	if _, err := a.Put(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// seed writes 14 rounds between hosts a, b and c, one result per
// direction each hour. a->b falls from ~9.4 to ~6 Gbit/s at round 7,
// when b's TSO was turned off, and its RTT rises from ~250 to ~900 us;
// the others are steady, each at its own figure, the newest of which
// the grid must show.
func seed(t testing.TB, a *archive.Archive) map[string]string {
	t.Helper()
	hosts := []string{"a", "b", "c"}
	for round := range 14 {
		for i, src := range hosts {
			for j, dst := range hosts {
				if src == dst {
					continue
				}
				bps := float64(100*(i+1)+10*(j+1))*1e6 + float64(round%3)*1e6
				rtt := float64(100 + 10*i + j)
				tso := true
				if src == "a" && dst == "b" {
					bps, rtt = 9.4e9+float64(round%3)*1e7, 250+float64(round%3)*10
					if round >= 7 {
						bps, rtt, tso = 6e9+float64(round%3)*1e7, 900+float64(round%3)*10, false
					}
				}
				put(t, a, archive.Synthetic{Source: src, Destination: dst, Started: t0.Add(time.Duration(round) * time.Hour), BitsPerSecond: bps, TSO: tso,
					RTTMicros: []float64{rtt - 5, rtt + 5}}, "")
			}
		}
	}
	// round 13: 13%3 = 1, so +1 Mbit/s (+10 Mbit/s for a->b).
	return map[string]string{"a->b": "6.01 Gbit/s", "b->a": "211 Mbit/s", "a->c": "131 Mbit/s",
		"c->a": "311 Mbit/s", "b->c": "231 Mbit/s", "c->b": "321 Mbit/s"}
}

// browser starts headless chromium, skipping when it is absent.
func browser(t *testing.T) context.Context { return browserB(t) }

// browserB is browser for tests and benchmarks.
func browserB(t testing.TB) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("needs a browser: install Debian's chromium package (apt-get install chromium)")
	}
	// TMPDIR: chromium makes its singleton socket's directory there
	// (org.chromium.Chromium.*) and, stopped by the test's end, leaves it
	// behind; inside the test's own directory it goes with it.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1400, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel3)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	// Every console error or exception (a CSP violation, a script
	// error, a failed load) fails the test.
	var mu sync.Mutex
	var console []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			// (Polls refused once the test's server closed are not errors
			// of the page.)
			if (m.Type == chromedp.ConsoleException || m.Type == "error") && !strings.Contains(m.Text, "ERR_CONNECTION_REFUSED") {
				mu.Lock()
				console = append(console, string(m.Type)+": "+m.Text)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range console {
			t.Errorf("browser console: %s", c)
		}
	})
	// A dialog is script that ran: none of these pages opens one.
	chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			t.Errorf("a script opened a dialog: %q", d.Message)
		}
	})
	return ctx
}

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

func serve(t testing.TB, a *archive.Archive) *httptest.Server {
	t.Helper()
	s, err := New(Options{Archive: a, Poll: 200 * time.Millisecond, Permutations: 199})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func cellSel(pair string) string { return fmt.Sprintf(`a.half[data-pair=%q]`, pair) }

// do runs steps, failing the test on an error.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// js evaluates an expression in the page.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// text is the text of the first element the CSS selector matches.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return js[string](t, ctx, fmt.Sprintf(`(document.querySelector(%q) || {textContent: "(none)"}).textContent.trim()`, sel))
}

func TestBrowserGridShowsEveryPair(t *testing.T) {
	ctx := browser(t)
	a := openArchive(t)
	want := seed(t, a)
	ts := serve(t, a)
	do(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid")))
	// 3 hosts: 3 cells above the diagonal of two halves, each of the 6
	// directions once (issue 42: the mirror cells drew each twice).
	if n := js[int](t, ctx, `document.querySelectorAll("a.half").length`); n != 6 {
		t.Errorf("%d cell halves, want 6", n)
	}
	for pair, fig := range want {
		if got := text(t, ctx, cellSel(pair)); got != fig {
			t.Errorf("%s shows %q, want %q", pair, got, fig)
		}
		class := js[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).className`, cellSel(pair)))
		wantState := Steady
		if pair == "a->b" {
			wantState = Regressed
		}
		if !strings.Contains(class, wantState) {
			t.Errorf("%s is %q, want %s", pair, class, wantState)
		}
	}
	// a->b regressed; the other five directions steady.
	if c := text(t, ctx, "#counts"); c != "6 directions: 1 regressed, 5 steady" {
		t.Errorf("counts %q, want 6 directions: 1 regressed, 5 steady", c)
	}
	// Not colour alone: the regressed half is marked.
	if mark := js[string](t, ctx, fmt.Sprintf(`getComputedStyle(document.querySelector(%q), "::before").content`, cellSel("a->b"))); mark != `"▼ "` {
		t.Errorf("a->b's mark %s, want \"▼ \"", mark)
	}
	// Hovering a cell says when, what and the limit kind (in the bar at
	// the bottom; the title, which focus shows too, says the same).
	rect := js[[]float64](t, ctx, fmt.Sprintf(`(r => [r.x + r.width/2, r.y + r.height/2])(document.querySelector(%q).getBoundingClientRect())`, cellSel("a->b")))
	do(t, ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, rect[0], rect[1]))
	tip := text(t, ctx, "#tip")
	for _, w := range []string{"a -> b", "6.01 Gbit/s", "2026-11-20 13:00:00 UTC", "limited by link", "regressed"} {
		if !strings.Contains(tip, w) {
			t.Errorf("focus details %q lack %q", tip, w)
		}
	}
}

func TestBrowserPairHistory(t *testing.T) {
	ctx := browser(t)
	a := openArchive(t)
	seed(t, a)
	ts := serve(t, a)
	do(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid")),
		chromedp.Click(chromedp.CSS(cellSel("a->b"))), chromedp.WaitVisible(chromedp.CSS("ul.changes")))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`Array.from(document.images).every(i => i.complete)`)); err != nil {
		t.Fatal(err)
	}
	changes := text(t, ctx, "ul.changes")
	note := text(t, ctx, "table.points tr.change")
	imgs := js[int](t, ctx, `Array.from(document.images).filter(i => i.naturalWidth > 0).length`)
	// The change is at round 7, 07:00, where b's TSO went off.
	for _, w := range []string{"fell", "2026-11-20 07:00:00", "b: tso on -> off"} {
		if !strings.Contains(changes, w) {
			t.Errorf("change points %q lack %q", changes, w)
		}
	}
	if !strings.Contains(note, "2026-11-20 07:00:00") || !strings.Contains(note, "change point") {
		t.Errorf("the marked point row is %q, want the 07:00 point noted as the change", note)
	}
	if imgs != 1 {
		t.Errorf("%d charts loaded, want 1", imgs)
	}
	// The RTT beside the throughput: its column (the 13:00 point's is
	// round 13's 900 + 10 us), its change point, and the chart's second
	// panel; the environment change listed and marked on the chart's
	// time axis.
	heads := js[string](t, ctx, `Array.from(document.querySelectorAll("table.points th")).map(h => h.textContent).join("|")`)
	if !strings.Contains(heads, "|throughput|rtt|") {
		t.Errorf("table heads %q, want throughput then rtt", heads)
	}
	if row := text(t, ctx, "table.points tbody tr:nth-child(1)"); !strings.Contains(row, "6010 Mbit/s") || !strings.Contains(row, "910 us") {
		t.Errorf("newest row %q, want 6010 Mbit/s and 910 us", row)
	}
	// The segments' means: (250*3 + 260*2 + 270*2) / 7 and (910*3 +
	// 920*2 + 900*2) / 7.
	if !strings.Contains(changes, "rtt rose 259 -> 910 us") {
		t.Errorf("change points %q lack the RTT's", changes)
	}
	if steps := text(t, ctx, "ul.steps"); !strings.Contains(steps, "2026-11-20 07:00:00 b: tso off") {
		t.Errorf("environment changes %q, want b's TSO at 07:00", steps)
	}
	svg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("img.chart").src).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{">b: tso off<", ">rtt (us)<", ">throughput (Mbit/s)<", ">environment<"} {
		if !strings.Contains(svg, w) {
			t.Errorf("the chart's SVG lacks the text %q", w)
		}
	}
	// Compare the newest and the oldest point, ticked oldest last, then
	// the newest's JSON.
	do(t, ctx, chromedp.Click(chromedp.CSS(`table.points tbody tr:nth-child(1) input`)),
		chromedp.Click(chromedp.CSS(`table.points tbody tr:nth-child(14) input`)))
	if n := js[int](t, ctx, `document.querySelectorAll("input:checked").length`); n != 2 {
		t.Fatalf("%d points ticked, want 2", n)
	}
	do(t, ctx,
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("main.compare")))
	verdict := text(t, ctx, "main")
	if !strings.Contains(verdict, "6010.00") || !strings.Contains(verdict, "9400.00") {
		t.Errorf("compare verdict %q does not name both throughputs", verdict)
	}
	// The older (00:00, 9400 Mbit/s) is the baseline: the change is a
	// fall, not a rise going back in time; and the header's age is the
	// newer's, not "no results yet".
	if !regexp.MustCompile(`baseline 2026-11-20 00:00 #\d+; compared: 2026-11-20 13:00 #`).MatchString(verdict) {
		t.Errorf("compare verdict %q: the baseline is not the older point (00:00)", verdict)
	}
	if age := text(t, ctx, "#age"); !strings.Contains(age, "newest result") || strings.Contains(age, "no results") {
		t.Errorf("the compare page's header says %q", age)
	}
	// "← grid Compare results OLDER and NEWER": the newest's id is the
	// sixth word.
	do(t, ctx, chromedp.Navigate(ts.URL+"/result.json?id="+strings.Fields(verdict)[6]), chromedp.WaitVisible(chromedp.CSS("body")))
	if raw := text(t, ctx, "body"); !strings.Contains(raw, `"summary"`) || !strings.Contains(raw, `: 6010000000`) {
		t.Errorf("raw JSON of the newest point lacks its throughput: %s", raw)
	}
}

func TestBrowserLiveUpdate(t *testing.T) {
	ctx := browser(t)
	a := openArchive(t)
	seed(t, a)
	ts := serve(t, a)
	do(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid")))
	before := text(t, ctx, cellSel("c->a"))
	put(t, a, archive.Synthetic{Source: "c", Destination: "a", Started: time.Now().UTC(), BitsPerSecond: 123e6, TSO: true}, "")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector(%q).textContent.trim() === "123 Mbit/s"`, cellSel("c->a")),
		chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Fatalf("the new result did not appear (cell was %q): %v", before, err)
	}
	time.Sleep(1100 * time.Millisecond)
	if age := text(t, ctx, "#age"); !strings.HasPrefix(age, "newest result ") || !strings.HasSuffix(age, " s ago") {
		t.Errorf("age says %q, want seconds since the new result", age)
	}
}

func TestBrowserEscapesLabels(t *testing.T) {
	ctx := browser(t)
	a := openArchive(t)
	const evil = `<img src=x onerror=alert(1)>`
	for i := range 4 {
		put(t, a, archive.Synthetic{Source: evil, Destination: "b", Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: 1e9, TSO: true,
			Labels: map[string]string{"site": evil}}, evil)
	}
	ts := serve(t, a)
	do(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid")))
	imgs := js[int](t, ctx, `document.querySelectorAll("img").length`)
	heads := js[string](t, ctx, `Array.from(document.querySelectorAll("table.grid tbody th")).map(h => h.textContent).join("|")`)
	if imgs != 0 || !strings.Contains(heads, evil) {
		t.Errorf("grid: %d img elements, row heads %q; want none and the label as text", imgs, heads)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(cellSel(evil+"->b"))), chromedp.WaitVisible(chromedp.CSS("table.points")))
	imgs = js[int](t, ctx, `document.querySelectorAll("img:not(.chart)").length`)
	rows := text(t, ctx, "table.points tbody")
	if imgs != 0 || !strings.Contains(rows, evil) {
		t.Errorf("pair page: %d img elements besides the chart, rows %q; want none and the title as text", imgs, rows)
	}
	// The chart names the host in its key: as text in the SVG, which
	// opened on its own shows no element of the host's making either.
	svg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("img.chart").src).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(svg, evil) || !strings.Contains(svg, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the chart's SVG does not hold the host escaped")
	}
	do(t, ctx, chromedp.Navigate(js[string](t, ctx, `document.querySelector("img.chart").src`)))
	if n := js[int](t, ctx, `document.getElementsByTagName("img").length`); n != 0 {
		t.Errorf("the chart opened alone has %d img elements", n)
	}
	time.Sleep(300 * time.Millisecond) // a dialog, had one opened, is reported by then
}

// TestBrowserKeyboardFocus: Tab, pressed as a keyboard user presses it
// (input.dispatchKeyEvent), reaches the grid's cells in order; the
// focused cell's details (when, what, the limit kind, why its colour)
// appear in the bar, and its accessible name says its direction, figure
// and state; Enter opens its pair.
func TestBrowserKeyboardFocus(t *testing.T) {
	ctx := browser(t)
	a := openArchive(t)
	seed(t, a)
	ts := serve(t, a)
	do(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid")))
	// A headless page is never the focused window, so focus events do
	// not fire in it unless it pretends to be.
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	focused := func() string {
		return js[string](t, ctx, `(e => e && e.matches("a.half") ? e.dataset.pair : (e ? e.tagName + " " + e.textContent.trim() : ""))(document.activeElement)`)
	}
	var got []string
	for range 20 {
		do(t, ctx, chromedp.KeyEvent(kb.Tab))
		got = append(got, focused())
		if got[len(got)-1] == "a->b" {
			break
		}
	}
	if got[len(got)-1] != "a->b" {
		t.Fatalf("Tab went through %q and never reached the first cell, a->b", got)
	}
	tip := text(t, ctx, "#tip")
	for _, w := range []string{"a -> b", "6.01 Gbit/s", "2026-11-20 13:00:00 UTC", "limited by link", "regressed", "fell 9409 -> 6010 Mbit/s"} {
		if !strings.Contains(tip, w) {
			t.Errorf("focused a->b, the details %q lack %q", tip, w)
		}
	}
	if l := js[string](t, ctx, `document.activeElement.getAttribute("aria-label")`); l != "a → b: 6.01 Gbit/s, regressed" {
		t.Errorf("a->b's accessible name %q", l)
	}
	// The next Tab: the lower half of the same cell, b->a, whose details
	// replace a->b's.
	do(t, ctx, chromedp.KeyEvent(kb.Tab))
	if f := focused(); f != "b->a" {
		t.Fatalf("after a->b, Tab focused %q, want b->a", f)
	}
	if tip := text(t, ctx, "#tip"); !strings.Contains(tip, "b -> a: 211 Mbit/s") || !strings.Contains(tip, "steady") || strings.Contains(tip, "6.01") {
		t.Errorf("focused b->a, the details say %q", tip)
	}
	do(t, ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("main.pairpage")))
	if h := text(t, ctx, "h1"); !strings.HasPrefix(h, "b → a") {
		t.Errorf("Enter on b->a opened %q", h)
	}
}

// TestBrowserLatencyPanels: a request/response pair's page charts its
// latency percentiles above its throughput and tabulates both.
func TestBrowserLatencyPanels(t *testing.T) {
	ctx := browser(t)
	a := openArchive(t)
	for round := range 8 {
		put(t, a, archive.Synthetic{Source: "x", Destination: "y", Started: t0.Add(time.Duration(round) * time.Hour), BitsPerSecond: 1e6,
			Latency: &stats.Latency{Count: 1000, P50: float64(30 + round), P90: 50, P99: 90}}, "")
	}
	ts := serve(t, a)
	do(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid")))
	if got := text(t, ctx, cellSel("x->y")); got != "37.0 us" {
		t.Errorf("the grid shows x->y's latest p50 as %q, want 37.0 us", got)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(cellSel("x->y"))), chromedp.WaitVisible(chromedp.CSS("table.points")))
	heads := js[string](t, ctx, `Array.from(document.querySelectorAll("table.points th")).map(h => h.textContent).join("|")`)
	if !strings.Contains(heads, "|p50|p90|p99|throughput|") {
		t.Errorf("table heads %q, want p50, p90, p99, throughput", heads)
	}
	if row := js[string](t, ctx, `Array.from(document.querySelectorAll("table.points tbody tr:nth-child(1) td.num")).map(c => c.textContent).join("|")`); row != "37.0 us|50.0 us|90.0 us|1.00 Mbit/s|1" {
		t.Errorf("newest row's figures %q, want 37.0 us|50.0 us|90.0 us|1.00 Mbit/s|1", row)
	}
	svg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("img.chart").src).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{">latency (p50, p90, p99) (us)<", ">throughput (Mbit/s)<", ">History: latency (p50, p90, p99) and throughput<"} {
		if !strings.Contains(svg, w) {
			t.Errorf("the chart's SVG lacks the text %q", w)
		}
	}
}

// TestBrowserTooFewDrawn: a pair of 2 results is drawn in its own
// colour (purple, #7b5ea7) and marked "? ", not green; the colour is
// the half's alone, not the table's (whose class "few", for grids of
// few hosts, once shared the state's name).
func TestBrowserTooFewDrawn(t *testing.T) {
	ctx := browser(t)
	a := openArchive(t)
	for round := range 2 {
		put(t, a, archive.Synthetic{Source: "x", Destination: "y", Started: t0.Add(time.Duration(round) * time.Hour), BitsPerSecond: 1e9, TSO: true}, "")
	}
	ts := serve(t, a)
	do(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.grid")))
	bg := func(sel string) string {
		return js[string](t, ctx, fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).backgroundColor`, sel))
	}
	if c := bg(cellSel("x->y")); c != "rgb(123, 94, 167)" {
		t.Errorf("x->y, 2 results, is drawn %s, want the too-few colour rgb(123, 94, 167)", c)
	}
	if c := bg("table.grid"); c == "rgb(123, 94, 167)" {
		t.Errorf("the whole grid is drawn in the too-few colour")
	}
	if mark := js[string](t, ctx, fmt.Sprintf(`getComputedStyle(document.querySelector(%q), "::before").content`, cellSel("x->y"))); mark != `"? "` {
		t.Errorf("x->y's mark %s, want \"? \"", mark)
	}
}
