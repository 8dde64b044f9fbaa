package client

import (
	"errors"
	"testing"

	"wirespeed/internal/control"
	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestCheckResultBoundsCPULists: a server's CPU record may list at most
// measure.MaxTasks threads and processes; one more is a protocol error.
func TestCheckResultBoundsCPULists(t *testing.T) {
	sp := spec.Default()
	ok := &measure.CPU{Threads: make([]measure.TaskCPU, measure.MaxTasks), OtherProcesses: make([]measure.TaskCPU, measure.MaxTasks)}
	if err := checkResult(sp, result.SideResult{CPU: ok}, sp.Length().Seconds()); err != nil {
		t.Errorf("a record at the bounds: %v", err)
	}
	for _, c := range []*measure.CPU{
		{Threads: make([]measure.TaskCPU, measure.MaxTasks+1)},
		{OtherProcesses: make([]measure.TaskCPU, measure.MaxTasks+1)},
		{PerCPUUtilPct: make([]float64, maxCPUs+1)},
	} {
		if err := checkResult(sp, result.SideResult{CPU: c}, sp.Length().Seconds()); !errors.Is(err, control.ErrProtocol) {
			t.Errorf("an oversized CPU record: %v, want a protocol error", err)
		}
	}
}
