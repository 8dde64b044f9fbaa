package dashboard

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"wirespeed/internal/archive"
)

// TestScreenshots takes the docs' screenshots of the archive in
// $WIRESPEED_DASHBOARD_ARCHIVE (a real lab mesh's; see docs/dashboard.md)
// into $WIRESPEED_DASHBOARD_SHOTS: the grid (of $WIRESPEED_DASHBOARD_TEST, or
// the newest result's test) and the pair $WIRESPEED_DASHBOARD_PAIR
// (a data-pair, "h4->h1"), its half focused in the grid's shot.
// Without them it skips.
func TestScreenshots(t *testing.T) {
	path, dir := os.Getenv("WIRESPEED_DASHBOARD_ARCHIVE"), os.Getenv("WIRESPEED_DASHBOARD_SHOTS")
	if path == "" || dir == "" {
		t.Skip("set WIRESPEED_DASHBOARD_ARCHIVE and WIRESPEED_DASHBOARD_SHOTS to take the docs' screenshots")
	}
	ctx := browser(t)
	a, err := archive.Open(context.Background(), archive.Target{Backend: archive.SQLite, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ts := serve(t, a)
	shot := func(name string) {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := ts.URL + "/"
	if test := os.Getenv("WIRESPEED_DASHBOARD_TEST"); test != "" {
		home += "?test=" + url.QueryEscape(test)
	}
	do(t, ctx, chromedp.EmulateViewport(1000, 560), chromedp.Navigate(home), chromedp.WaitVisible(chromedp.CSS("table.grid")))
	pair := os.Getenv("WIRESPEED_DASHBOARD_PAIR")
	if pair != "" {
		// The pair's half focused, as Tab leaves it: its details in the bar.
		if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
			t.Fatal(err)
		}
		js[chromedp.Void](t, ctx, fmt.Sprintf(`document.querySelector(%q).focus()`, cellSel(pair)))
	}
	shot("dashboard-grid.png")
	if pair == "" {
		return
	}
	do(t, ctx, chromedp.EmulateViewport(1000, 900), chromedp.Click(chromedp.CSS(cellSel(pair))), chromedp.WaitVisible(chromedp.CSS("img.chart")))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`Array.from(document.images).every(i => i.complete)`)); err != nil {
		t.Fatal(err)
	}
	shot("dashboard-pair.png")
}
