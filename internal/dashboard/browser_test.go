package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"wirespeed/internal/archive"
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
// when b's TSO was turned off; the others are steady, each at its own
// figure, the newest of which the grid must show.
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
				tso := true
				if src == "a" && dst == "b" {
					bps = 9.4e9 + float64(round%3)*1e7
					if round >= 7 {
						bps, tso = 6e9+float64(round%3)*1e7, false
					}
				}
				put(t, a, archive.Synthetic{Source: src, Destination: dst, Started: t0.Add(time.Duration(round) * time.Hour), BitsPerSecond: bps, TSO: tso}, "")
			}
		}
	}
	// round 13: 13%3 = 1, so +1 Mbit/s (+10 Mbit/s for a->b).
	return map[string]string{"a->b": "6010 Mbit/s", "b->a": "211 Mbit/s", "a->c": "131 Mbit/s",
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
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()),
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
	// 3 hosts: 6 off-diagonal cells of two halves.
	if n := js[int](t, ctx, `document.querySelectorAll("a.half").length`); n != 12 {
		t.Errorf("%d cell halves, want 12", n)
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
	// Hovering a cell says when, what and the limit kind (in the bar at
	// the bottom; the title, which focus shows too, says the same).
	rect := js[[]float64](t, ctx, fmt.Sprintf(`(r => [r.x + r.width/2, r.y + r.height/2])(document.querySelector(%q).getBoundingClientRect())`, cellSel("a->b")))
	do(t, ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, rect[0], rect[1]))
	tip := text(t, ctx, "#tip")
	for _, w := range []string{"a -> b", "6010 Mbit/s", "2026-11-20 13:00:00 UTC", "limited by link", "regressed"} {
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
	// Compare the newest and the oldest point, then the newest's JSON.
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
	do(t, ctx, chromedp.Navigate(ts.URL+"/result.json?id="+strings.Fields(verdict)[4]), chromedp.WaitVisible(chromedp.CSS("body")))
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
	time.Sleep(300 * time.Millisecond) // a dialog, had one opened, is reported by then
}
