package dashboard

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// The page's colours (assets/dashboard.css' --bg, --fg and --line), in
// which a chart is drawn: gonum draws black on white, and the chart was
// a white sheet on the dark page.
const (
	chartBG   = "#11151c"
	chartFG   = "#e6e9ef"
	chartGrid = "#2a3140"
)

var svgColor = regexp.MustCompile(`(fill|stroke):#([0-9A-Fa-f]{6})`)

// darkSVG redraws a chart's SVG in the page's colours: its white
// background in the page's, black lines and text in the page's text
// colour, light grey grid lines in the page's rule colour, other greys
// with their lightness turned over, and dark colours (a series' blue,
// the environment's brown) lightened to stand out on the dark ground.
func darkSVG(svg []byte) []byte {
	svg = svgColor.ReplaceAllFunc(svg, func(m []byte) []byte {
		sub := svgColor.FindSubmatch(m)
		return []byte(string(sub[1]) + ":" + darkColor(string(sub[2])))
	})
	// Text without a colour of its own is drawn in the page's.
	rule := []byte("<style>\n\t\ttext{fill:" + chartFG + "}")
	if i := bytes.Index(svg, []byte("<style>")); i >= 0 {
		return append(svg[:i:i], append(rule, svg[i+len("<style>"):]...)...)
	}
	if i := bytes.Index(svg, []byte("<g")); i >= 0 {
		return append(svg[:i:i], append([]byte("<style>text{fill:"+chartFG+"}</style>\n"), svg[i:]...)...)
	}
	return svg
}

func darkColor(hex string) string {
	v, _ := strconv.ParseUint(hex, 16, 32)
	r, g, b := float64(v>>16&0xff), float64(v>>8&0xff), float64(v&0xff)
	switch {
	case r == g && g == b && r == 255:
		return chartBG
	case r == g && g == b && r == 0:
		return chartFG
	case r == g && g == b && r >= 200:
		return chartGrid
	case r == g && g == b:
		return fmt.Sprintf("#%02x%02x%02x", 255-int(r), 255-int(r), 255-int(r))
	}
	if luminance(r, g, b) < 0.2 {
		// A third of the way to white.
		mix := func(c float64) int { return int(c + (255-c)/3) }
		return fmt.Sprintf("#%02x%02x%02x", mix(r), mix(g), mix(b))
	}
	return "#" + hex
}

// luminance is WCAG's relative luminance of an sRGB colour (0-255).
func luminance(r, g, b float64) float64 {
	lin := func(c float64) float64 {
		c /= 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}
