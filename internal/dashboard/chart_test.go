package dashboard

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestChartInPageTheme (issue 48, item 9): a pair's chart is drawn in
// the page's colours, read from the page's stylesheet: its background
// is the page's, no white sheet nor black ink is left, its text is the
// page's text colour (readable: contrast of 4.5 or more), and its time
// axis is labelled at 4 ticks or more. Before, the chart was black on
// white on the dark page.
func TestChartInPageTheme(t *testing.T) {
	a := openArchive(t)
	seed(t, a)
	s, err := New(Options{Archive: a, Permutations: 199})
	if err != nil {
		t.Fatal(err)
	}
	css := get(t, s, "/assets/dashboard.css")
	colour := func(name string) string {
		m := regexp.MustCompile(`--` + name + `:\s*(#[0-9a-fA-F]{6})`).FindStringSubmatch(css)
		if m == nil {
			t.Fatalf("the stylesheet has no --%s", name)
		}
		return strings.ToLower(m[1])
	}
	bg, fg := colour("bg"), colour("fg")
	svg := get(t, s, "/chart.svg?src=a&dst=b&test=TCP_STREAM&series=0")
	if !strings.Contains(svg, `style="fill:`+bg+`"`) {
		t.Errorf("the chart's background is not the page's %s", bg)
	}
	for _, c := range []string{"fill:#FFFFFF", "stroke:#000000", "fill:#ffffff"} {
		if strings.Contains(svg, c) {
			t.Errorf("the chart still has %s", c)
		}
	}
	text := regexp.MustCompile(`text\{fill:(#[0-9a-fA-F]{6})\}`).FindStringSubmatch(svg)
	if text == nil {
		t.Fatal("the chart's text has no colour of its own (black by default)")
	}
	if r := contrast(text[1], bg); r < 4.5 {
		t.Errorf("the chart's text %s on %s has a contrast of %.1f, want 4.5 or more", text[1], bg, r)
	}
	if text[1] != fg {
		t.Errorf("the chart's text is %s, not the page's %s", text[1], fg)
	}
	// The seeded pair spans 13 hours.
	times := regexp.MustCompile(`>([0-2][0-9]:[0-5][0-9])</text>`).FindAllStringSubmatch(svg, -1)
	labels := map[string]bool{}
	for _, m := range times {
		labels[m[1]] = true
	}
	if len(labels) < 4 {
		t.Errorf("the chart's time axis is labelled at %d times %v, want 4 or more", len(labels), labels)
	}
}

func contrast(a, b string) float64 {
	lum := func(h string) float64 {
		v, _ := strconv.ParseUint(strings.TrimPrefix(h, "#"), 16, 32)
		lin := func(c uint64) float64 {
			x := float64(c) / 255
			if x <= 0.03928 {
				return x / 12.92
			}
			return math.Pow((x+0.055)/1.055, 2.4)
		}
		return 0.2126*lin(v>>16&0xff) + 0.7152*lin(v>>8&0xff) + 0.0722*lin(v&0xff)
	}
	la, lb := lum(a), lum(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}
