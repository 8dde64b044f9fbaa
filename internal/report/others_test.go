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
