package report

import (
	"fmt"
	"io"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// PlusMinus is a figure's interval as netperf writes it,
// "+/-1.2% @ 99% conf.", or "no interval" when there is none (fewer than
// two iterations).
func PlusMinus(f result.FigureConfidence, level float64) string {
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

// confidence writes how the mean of a repeated measurement was reached:
// the iterations, the interval asked and, per figure, the interval
// achieved, with NOT REACHED where it is wider than asked. Verbose, its
// first line says the per-stream figures (which only -v shows) are the
// last iteration's.
func confidence(w io.Writer, s result.Summary, verbose bool) {
	c := s.Confidence
	if c == nil {
		return
	}
	verdict := map[spec.Reason]string{
		spec.ReasonReached:     "reached",
		spec.ReasonMaxHit:      "NOT REACHED at the maximum",
		spec.ReasonInterrupted: "interrupted",
	}[c.Stop]
	if verdict == "" {
		verdict = string(c.Stop)
	}
	streams := ""
	if verbose {
		streams = " (per-stream figures: the last iteration's)"
	}
	fmt.Fprintf(w, "mean of %d iteration%s%s; interval asked +/-%.4g%% @ %s%% conf.: %s\n",
		c.Iterations, plural(c.Iterations), streams, c.WidthPct/2, levelPct(c.Level), verdict)
	line := func(name string, f *result.FigureConfidence) {
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

// IterationLine is the line that ends one iteration of a repeated
// measurement, as the run, sweep and matrix commands show it:
// "iteration 2 of at most 10: 9341.22 10^6bits/sec, CPU 48.1% local,
// 51.0% remote; so far +/-1.2% @ 99% conf.". The CPU figures appear
// when measured, the interval once the iterations so far give one.
// FitClauses writes it in Width.
func IterationLine(iteration, max int, res result.Result, conf *result.Confidence) string {
	return iterationLine(iteration, max, res, conf, true)
}

// IterationProgress is IterationLine without the CPU figures, for the
// progress lines of a sweep or a matrix, which name the point before it
// (its row shows the CPU).
func IterationProgress(iteration, max int, res result.Result, conf *result.Confidence) string {
	return iterationLine(iteration, max, res, conf, false)
}

func iterationLine(iteration, max int, res result.Result, conf *result.Confidence, cpu bool) string {
	s := fmt.Sprintf("iteration %d of at most %d: %.2f 10^6bits/sec", iteration, max, units.Mega(res.Summary.BitsPerSecond))
	l, r := res.Summary.LocalCPU, res.Summary.RemoteCPU
	switch {
	case !cpu:
	case l != nil && r != nil:
		s += fmt.Sprintf(", CPU %.1f%% local, %.1f%% remote", l.UtilPct, r.UtilPct)
	case l != nil:
		s += fmt.Sprintf(", CPU %.1f%% local", l.UtilPct)
	case r != nil:
		s += fmt.Sprintf(", CPU %.1f%% remote", r.UtilPct)
	}
	if conf != nil && conf.AchievedPct != nil {
		s += "; so far " + PlusMinus(conf.FigureConfidence, conf.Level)
	}
	if res.Interrupted {
		s += " (interrupted)"
	}
	return s
}
