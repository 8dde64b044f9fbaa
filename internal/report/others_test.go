package report

import (
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// TestCPUWarnsOfOtherProcesses: the CPU lines are followed by a warning
// for the side whose window other processes shared, and only that side.
func TestCPUWarnsOfOtherProcesses(t *testing.T) {
	var b strings.Builder
	CPU(&b, result.Summary{
		LocalCPU:  &measure.CPU{CPUs: 2, UtilPct: 80, UserPct: 40, SystemPct: 40, IdlePct: 20, OtherProcessesUtilPct: 50},
		RemoteCPU: &measure.CPU{CPUs: 2, UtilPct: 80, UserPct: 40, SystemPct: 40, IdlePct: 20},
	})
	out := b.String()
	if !strings.Contains(out, "warning: local side: other processes used 50% of a CPU") || strings.Contains(out, "remote side: other") {
		t.Errorf("want a warning for the local side only:\n%s", out)
	}
}

// TestCPUShowsBaseline: a side's idle baseline is on its CPU line, and a
// large one (8% against 50% measured) warns for that side alone.
func TestCPUShowsBaseline(t *testing.T) {
	var b strings.Builder
	CPU(&b, result.Summary{
		LocalCPU:  &measure.CPU{CPUs: 2, UtilPct: 50, UserPct: 25, SystemPct: 25, IdlePct: 50, BusiestCPU: -1, Baseline: &measure.CPUBaseline{UtilPct: 4, WindowS: 0.2}},
		RemoteCPU: &measure.CPU{CPUs: 2, UtilPct: 50, UserPct: 25, SystemPct: 25, IdlePct: 50, BusiestCPU: -1, Baseline: &measure.CPUBaseline{UtilPct: 0.5, WindowS: 0.2}},
	})
	out := b.String()
	for _, want := range []string{"(2 cpus, busy before the test 4.0%;", "(2 cpus, busy before the test 0.5%;", "warning: local side: with no test running the host was 4.0% busy"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "remote side:") {
		t.Errorf("a 0.5%% baseline warned:\n%s", out)
	}
}
