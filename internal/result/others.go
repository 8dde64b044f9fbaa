package result

import (
	"fmt"

	"wirespeed/internal/measure"
)

// OthersWarnPct is how much of a side's measured utilization other
// processes may account for before the CPU figures carry a warning: the
// utilization and service demand are system-wide, so whatever other
// processes ran is inside them, and at 5% the error is of the size of the
// differences users argue about (netperf's +/-2.5% intervals).
// OthersWarnMinPct keeps tiny utilizations, where a few ticks are 5%, from
// warning: other processes must also have used at least this share of
// all the CPUs.
const (
	OthersWarnPct    = 5.0
	OthersWarnMinPct = 1.0
)

// Others is what OthersFigures found: other processes' share of a
// side's CPU during its window, past the thresholds, and the side's idle
// baseline; the report writes it long (Text) or short.
type Others struct {
	Side Side
	// UtilPct is the other processes' CPU in percent of one CPU, the
	// peer's wirespeed left out; SharePct the same in percent of all the
	// side's CPUs, and OfMeasuredPct in percent of the utilization
	// measured (MeasuredPct over CPUs CPUs). Zero without process
	// figures, when the baseline alone warns.
	UtilPct, SharePct, OfMeasuredPct float64
	CPUs                             int
	MeasuredPct                      float64
	// Busiest is the busiest of the other processes, nil when none is
	// named.
	Busiest *measure.TaskCPU
	// Baseline is the side's idle baseline, nil without one.
	Baseline *measure.CPUBaseline
}

// BaselineOnly reports whether the baseline alone warns: the side had no
// process figures.
func (o Others) BaselineOnly() bool { return o.UtilPct <= 0 }

// OthersWarning says when other processes used enough of a side's CPUs
// during its window to spoil its CPU figures, naming the busiest of them,
// and what the side's idle baseline (measure.CPU.Baseline: the host's
// utilization before the session's first run) was; "" when
// OthersFigures finds nothing. It is the long form of Others (Text).
func OthersWarning(side Side, c, peer *measure.CPU) string {
	o := OthersFigures(side, c, peer)
	if o == nil {
		return ""
	}
	return o.Text()
}

// OthersFigures says when other processes used enough of a side's CPUs
// during its window to spoil its CPU figures. Without process figures
// the baseline alone warns, at the same thresholds: a host that was busy
// with no test running is busy with something else. It is nil when
// neither is large enough. The text report prints it under the CPU
// lines; it is not one of the result's warnings, which say what went
// wrong with the run itself (the JSON has the figures:
// other_processes_util_pct, other_processes and baseline).
//
// peer is the other side's CPU record, when it has one: on one host (a
// lab, or two processes on loopback) the peer's wirespeed process is
// among the other processes, and it is the test's, so its time is taken
// out and it is not named.
func OthersFigures(side Side, c, peer *measure.CPU) *Others {
	if c == nil || c.CPUs <= 0 || c.UtilPct <= 0 {
		return nil
	}
	if c.OtherProcessesUtilPct <= 0 {
		return baselineOthers(side, c)
	}
	others := c.OtherProcessesUtilPct
	busiest := c.OtherProcesses
	if peer != nil && peer.PID > 0 {
		busiest = nil
		for _, p := range c.OtherProcesses {
			if p.ID == peer.PID {
				others -= p.UtilPct
				continue
			}
			busiest = append(busiest, p)
		}
	}
	share := others / float64(c.CPUs) // percent of all the CPUs
	frac := 100 * share / c.UtilPct   // percent of what was measured
	if share < OthersWarnMinPct || frac < OthersWarnPct {
		return nil
	}
	o := &Others{Side: side, UtilPct: others, SharePct: share, OfMeasuredPct: frac, CPUs: c.CPUs, MeasuredPct: c.UtilPct, Baseline: c.Baseline}
	if len(busiest) > 0 {
		o.Busiest = &busiest[0]
	}
	return o
}

// Text is the warning in full: the other processes' CPU three ways, the
// busiest and the idle baseline.
func (o Others) Text() string {
	if o.BaselineOnly() {
		b := o.Baseline
		return fmt.Sprintf("%s side: with no test running the host was %.1f%% busy (measured over %.2fs before the first run, %.0f%% of the %.1f%% measured): the CPU utilization and service demand may include that load",
			o.Side, b.UtilPct, b.WindowS, 100*b.UtilPct/o.MeasuredPct, o.MeasuredPct)
	}
	s := fmt.Sprintf("%s side: other processes used %.0f%% of a CPU during the window (%.1f%% of the %d CPUs, %.0f%% of the %.1f%% measured): the CPU utilization and service demand include them",
		o.Side, o.UtilPct, o.SharePct, o.CPUs, o.OfMeasuredPct, o.MeasuredPct)
	if p := o.Busiest; p != nil {
		s += fmt.Sprintf(" (busiest: %s, pid %d, %.0f%% of a CPU)", p.Name, p.ID, p.UtilPct)
	}
	if b := o.Baseline; b != nil {
		s += fmt.Sprintf("; with no test running the host was %.1f%% busy (over %.2fs before the first run)", b.UtilPct, b.WindowS)
	}
	return s
}

// baselineOthers is OthersFigures for a side without process figures:
// it warns when the idle baseline is at least OthersWarnMinPct of all the
// CPUs and OthersWarnPct of the utilization measured.
func baselineOthers(side Side, c *measure.CPU) *Others {
	b := c.Baseline
	if b == nil {
		return nil
	}
	frac := 100 * b.UtilPct / c.UtilPct
	if b.UtilPct < OthersWarnMinPct || frac < OthersWarnPct {
		return nil
	}
	return &Others{Side: side, CPUs: c.CPUs, MeasuredPct: c.UtilPct, Baseline: b}
}
