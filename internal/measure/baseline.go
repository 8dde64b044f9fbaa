package measure

import "fmt"

// CPUBaseline is the system-wide CPU utilization over a short window in
// which the test was not running: taken once per control session, on
// each side, before its first run. It tells what the host did on its own,
// so a reader can tell the test's CPU from a neighbour's.
type CPUBaseline struct {
	// UtilPct is the share of all CPU time that was busy (CPUUsage's
	// UtilPct: all but idle and iowait), in percent of all the CPUs.
	// From idle residencies (Source BaselineIdleResidency) this process's
	// own CPU time in the window is left out.
	UtilPct float64 `json:"baseline_util_pct"`
	// WindowS is the length of the window, by the monotonic clock.
	WindowS float64 `json:"baseline_s"`
	// Source is how it was measured: BaselineIdleResidency or
	// BaselineProcStat; empty in results of earlier versions (/proc/stat).
	Source string `json:"baseline_source,omitempty"`
}

// The sources of a baseline: each CPU's idle residency from cpuidle, to
// the microsecond, over a window of milliseconds (BaselineOfIdle); or
// /proc/stat's ticks of 10 ms over a fifth of a second (BaselineOf), where
// the kernel has no cpuidle driver.
const (
	BaselineIdleResidency = "cpuidle"
	BaselineProcStat      = "proc_stat"
)

// BaselineOf is the baseline between two samples of /proc/stat taken
// windowS seconds apart. A window in which the kernel counted no tick is
// an error: its utilization would read 0% whatever the host did.
func BaselineOf(before, after CPUSample, windowS float64) (CPUBaseline, error) {
	u := CPUDelta(before, after)
	if u.Ticks == 0 {
		return CPUBaseline{}, fmt.Errorf("cpu baseline: no tick counted in %.3fs", windowS)
	}
	return CPUBaseline{UtilPct: u.UtilPct, WindowS: windowS, Source: BaselineProcStat}, nil
}
