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

// OthersWarning says when other processes used enough of a side's CPUs
// during its window to spoil its CPU figures, naming the busiest of them.
// It is "" when they did not, or when the side recorded no processes. The
// text report prints it under the CPU lines; it is not one of the result's
// warnings, which say what went wrong with the run itself (the JSON has
// the figures: other_processes_util_pct and other_processes).
func OthersWarning(side Side, c *measure.CPU) string {
	if c == nil || c.CPUs <= 0 || c.UtilPct <= 0 || c.OtherProcessesUtilPct <= 0 {
		return ""
	}
	share := c.OtherProcessesUtilPct / float64(c.CPUs) // percent of all the CPUs
	frac := 100 * share / c.UtilPct                    // percent of what was measured
	if share < OthersWarnMinPct || frac < OthersWarnPct {
		return ""
	}
	s := fmt.Sprintf("%s side: other processes used %.0f%% of a CPU during the window (%.1f%% of the %d CPUs, %.0f%% of the %.1f%% measured): the CPU utilization and service demand include them",
		side, c.OtherProcessesUtilPct, share, c.CPUs, frac, c.UtilPct)
	if len(c.OtherProcesses) > 0 {
		p := c.OtherProcesses[0]
		s += fmt.Sprintf(" (busiest: %s, pid %d, %.0f%% of a CPU)", p.Name, p.ID, p.UtilPct)
	}
	return s
}
