package report

import (
	"strconv"
	"strings"

	"wirespeed/internal/history"
)

// The figures and names that report writes for people and the plots
// (internal/plot) write beside them, so that a plot's axes and legends
// read as report's text does.

// RateUnit picks a unit for bits/s figures up to maxBPS: the scale to
// divide them by and its name.
func RateUnit(maxBPS float64) (scale float64, unit string) { return rateUnit(maxBPS) }

// rateUnit is RateUnit.
func rateUnit(maxBPS float64) (scale float64, unit string) {
	if maxBPS >= 1e10 {
		return 1e9, "Gbit/s"
	}
	return 1e6, "Mbit/s"
}

// QdiscRate writes a qdisc's "tbf rate_bps=120000000" with its rate
// as format writes bits/s ("tbf 120M" for a label, "tbf 120 Mbit/s"
// for a sentence); other items' values are kept.
func QdiscRate(name, v string, format func(unit string, bps float64) string) string {
	return qdiscRate(name, v, format)
}

// qdiscRate is QdiscRate.
func qdiscRate(name, v string, format func(unit string, bps float64) string) string {
	if name != "qdisc" {
		return v
	}
	kind, rate, ok := strings.Cut(v, " rate_bps=")
	if !ok {
		return v
	}
	bps, err := strconv.ParseFloat(rate, 64)
	if err != nil {
		return v
	}
	return kind + " " + format("bits/s", bps)
}

// TrimFloat writes v with three significant digits at least, no
// exponent.
func TrimFloat(v float64) string { return trimFloat(v) }

// SeriesName is a history series' name: "A->B TCP_STREAM 131072 B",
// with the settings after it.
func SeriesName(k history.Key) string { return seriesName(k) }

// LevelPct writes a confidence level fraction as a percentage: 0.99 as
// "99", 0.995 as "99.5".
func LevelPct(level float64) string { return levelPct(level) }
