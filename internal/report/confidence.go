package report

import (
	"fmt"
	"io"

	"wirespeed/internal/run"
)

// PlusMinus is a figure's interval as netperf writes it,
// "+/-1.2% @ 99% conf.", or "no interval" when there is none (fewer than
// two iterations).
func PlusMinus(f run.FigureConfidence, level float64) string {
	h, ok := f.HalfWidthPct()
	if !ok {
		return "no interval"
	}
	return fmt.Sprintf("+/-%.1f%% @ %s%% conf.", h, levelPct(level))
}

// levelPct writes a confidence level fraction as a percentage: 0.99 as
// "99", 0.995 as "99.5".
func levelPct(level float64) string {
	return fmt.Sprintf("%.4g", 100*level)
}

// Confidence writes how the mean of a repeated measurement was reached:
// the iterations, the interval asked and, per figure, the interval
// achieved, with NOT REACHED where it is wider than asked.
func Confidence(w io.Writer, s run.Summary) {
	c := s.Confidence
	if c == nil {
		return
	}
	verdict := map[string]string{
		"reached":     "reached",
		"max_hit":     "NOT REACHED at the maximum",
		"interrupted": "interrupted",
	}[c.Stop]
	if verdict == "" {
		verdict = c.Stop
	}
	fmt.Fprintf(w, "mean of %d iteration%s (per-stream figures: the last iteration's); interval asked +/-%.4g%% @ %s%% conf.: %s\n",
		c.Iterations, plural(c.Iterations), c.WidthPct/2, levelPct(c.Level), verdict)
	line := func(name string, f *run.FigureConfidence) {
		if f == nil {
			return
		}
		mark := ""
		if !f.Reached && f.AchievedPct != nil {
			mark = "  NOT REACHED"
		}
		fmt.Fprintf(w, "  %-16s %s%s\n", name, PlusMinus(*f, c.Level), mark)
	}
	line("throughput", &c.FigureConfidence)
	line("local CPU util", c.LocalCPU)
	line("remote CPU util", c.RemoteCPU)
}
