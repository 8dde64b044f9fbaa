package result

import "wirespeed/internal/measure"

// OthersWarnPct is how much of a side's measured utilization other
// processes may account for before the CPU figures carry a warning: the
// utilization and service demand are system-wide, so whatever other
// processes ran is inside them, and at 5% the error is of the size of the
// differences users argue about (netperf's +/-2.5% intervals).
// OthersWarnMinPct keeps tiny utilizations, where a few ticks are 5%, from
// warning: other processes must also have used at least this share of
// all the CPUs.
//
// OthersRestPct is how much more than the processes named the host's
// figure must be (percent of one CPU) for the warning to say the rest
// was in processes that came and went: less is within the ticks' noise.
const (
	OthersWarnPct    = 5.0
	OthersWarnMinPct = 1.0
	OthersRestPct    = 10.0
)

// Others is what OthersFigures found: other processes' share of a
// side's CPU during its window, past the thresholds, and the side's idle
// baseline; the report writes it long or short.
type Others struct {
	Side Side
	// UtilPct is the other processes' CPU in percent of one CPU, the
	// peer's wirespeed left out (measure.CPU.OthersOnHost): the host's
	// time beyond the test's, those that started and ended within the
	// window included; SharePct the same in percent of all the side's
	// CPUs, and OfMeasuredPct in percent of the utilization measured
	// (MeasuredPct over CPUs CPUs). Zero without process figures, when
	// the baseline alone warns.
	UtilPct, SharePct, OfMeasuredPct float64
	CPUs                             int
	MeasuredPct                      float64
	// NamedPct is the part of UtilPct in the processes named, those
	// alive at both ends of the window, in percent of one CPU; Named is
	// them, busiest first, the peer's left out.
	NamedPct float64
	Named    []measure.TaskCPU
	// Busiest is the busiest of the other processes, nil when none is
	// named.
	Busiest *measure.TaskCPU
	// Baseline is the side's idle baseline, nil without one.
	Baseline *measure.CPUBaseline
}

// BaselineOnly reports whether the baseline alone warns: the side had no
// process figures.
func (o Others) BaselineOnly() bool { return o.UtilPct <= 0 }

// CameAndWent reports whether the host's figure exceeds the processes
// named by OthersRestPct or more: that much ran in processes that
// started or ended within the window.
func (o Others) CameAndWent() bool { return o.UtilPct-o.NamedPct >= OthersRestPct }

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
	others := c.OthersOnHost(peer)
	if others <= 0 {
		return baselineOthers(side, c)
	}
	named, busiest := c.OtherProcessesUtilPct, c.OtherProcesses
	if peer != nil && peer.PID > 0 {
		busiest = nil
		for _, p := range c.OtherProcesses {
			if p.ID == peer.PID {
				named -= p.UtilPct
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
	o := &Others{Side: side, UtilPct: others, SharePct: share, OfMeasuredPct: frac, CPUs: c.CPUs, MeasuredPct: c.UtilPct,
		NamedPct: max(named, 0), Named: busiest, Baseline: c.Baseline}
	if len(busiest) > 0 {
		o.Busiest = &busiest[0]
	}
	return o
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
