package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"wirespeed/internal/run"
)

// Series is the points of one results document, labelled for a plot or a
// CSV file that puts several documents side by side.
type Series struct {
	Label  string
	Points []run.Point
}

// PointsOf returns a document's points: a sweep's, or the single point of
// a run (at its send size).
func PointsOf(doc run.Document) []run.Point {
	if len(doc.Points) > 0 {
		return doc.Points
	}
	if len(doc.Directions) == 0 {
		return nil
	}
	size := doc.Spec.SendSize
	if doc.Spec.Kind.RR() {
		size = doc.Spec.RequestSize
	}
	return []run.Point{{MsgSize: size, Result: doc.Result}}
}

var pointsCSVHeader = []string{
	"label", "test", "msg_size", "iterations", "throughput_bps", "throughput_lo_bps", "throughput_hi_bps",
	"confidence_level", "achieved_pct", "reached", "local_util_pct", "remote_util_pct",
	"local_service_demand_us_per_kb", "remote_service_demand_us_per_kb", "interrupted", "limit",
}

// PointsCSV writes one row per point of each series: the mean figures,
// the confidence interval (empty cells where there is none) and the CPU.
func PointsCSV(w io.Writer, series []Series) error {
	cw := csv.NewWriter(w)
	cw.Write(pointsCSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	for _, s := range series {
		for _, p := range s.Points {
			sum := p.Summary
			iters, lo, hi, level, achieved, reached := "1", "", "", "", "", ""
			if c := sum.Confidence; c != nil {
				iters = strconv.Itoa(c.Iterations)
				lo, hi, level, achieved = opt(c.Lo), opt(c.Hi), f(c.Level), opt(c.AchievedPct)
				reached = strconv.FormatBool(c.Reached)
			}
			lu, ru, lsd, rsd := "", "", "", ""
			if c := sum.LocalCPU; c != nil {
				lu, lsd = f(c.UtilPct), f(c.ServiceDemandMicrosPerKB)
			}
			if c := sum.RemoteCPU; c != nil {
				ru, rsd = f(c.UtilPct), f(c.ServiceDemandMicrosPerKB)
			}
			cw.Write([]string{
				s.Label, string(p.Spec.Kind), strconv.Itoa(p.MsgSize), iters, f(sum.BitsPerSecond), lo, hi,
				level, achieved, reached, lu, ru, lsd, rsd, strconv.FormatBool(p.Interrupted), limitKind(sum.Limit),
			})
		}
	}
	cw.Flush()
	return cw.Error()
}
