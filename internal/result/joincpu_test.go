package result

import (
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
)

// TestJoinCPU: each side's service demand is its CPU time over its window
// per KB the receiver counted, for both sides, as netperf computes it.
func TestJoinCPU(t *testing.T) {
	sp := spec.Default()
	sp.CPU = true
	local := SideResult{Side: Local, Flows: []Flow{flow(spec.ClientToServer, Local, Sender, 2, map[int]int64{1: 2_000_000})},
		CPU: &measure.CPU{UtilPct: 50, CPUs: 4, ElapsedS: 2.5, PerCPUUtilPct: []float64{50}, PerCPUIDs: []int{0}}}
	remote := SideResult{Side: Remote, Flows: []Flow{flow(spec.ClientToServer, Remote, Receiver, 2, map[int]int64{1: 1_024_000})},
		CPU: &measure.CPU{UtilPct: 10, CPUs: 2, ElapsedS: 2}}
	res := Join(sp, local, remote)
	// local: 0.5 * 4 CPUs * 2.5 s = 5 s of CPU = 5e6 us over 1000 KB.
	if got := res.Summary.LocalCPU.ServiceDemandMicrosPerKB; got != 5000 {
		t.Errorf("local service demand %v, want 5000", got)
	}
	// remote: 0.1 * 2 * 2 s = 0.4 s = 4e5 us over 1000 KB.
	if got := res.Summary.RemoteCPU.ServiceDemandMicrosPerKB; got != 400 {
		t.Errorf("remote service demand %v, want 400", got)
	}
	if local.CPU.ServiceDemandMicrosPerKB != 0 {
		t.Errorf("Join changed the side's own figures")
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q", res.Warnings)
	}

	remote.CPU = nil
	remote.CPUError = "read cpu times: open /x/stat: no such file"
	res = Join(sp, local, remote)
	if res.Summary.RemoteCPU != nil || len(res.Warnings) != 1 || res.Warnings[0] != "remote side: no CPU figures: read cpu times: open /x/stat: no such file" {
		t.Errorf("remote without CPU: %v, warnings %q", res.Summary.RemoteCPU, res.Warnings)
	}
	sp.CPU = false
	local.CPU = nil
	if res := Join(sp, local, remote); len(res.Warnings) != 0 {
		t.Errorf("CPU not asked, yet warnings %q", res.Warnings)
	}
}

// TestOthersWarning holds the warning about other processes to shares
// worked out by hand: 60% of a CPU on 2 CPUs is 30% of the machine, 40%
// of a measured 75%.
func TestOthersWarning(t *testing.T) {
	tests := []struct {
		name string
		c    measure.CPU
		want string
	}{
		{"a busy neighbour", measure.CPU{CPUs: 2, UtilPct: 75, OtherProcessesUtilPct: 60,
			OtherProcesses: []measure.TaskCPU{{ID: 42, Name: "bash", UtilPct: 55}}},
			"local side: other processes used 60% of a CPU during the window (30.0% of the 2 CPUs, 40% of the 75.0% measured): the CPU utilization and service demand include them (busiest: bash, pid 42, 55% of a CPU)"},
		{"under 5% of what was measured", measure.CPU{CPUs: 2, UtilPct: 90, OtherProcessesUtilPct: 8}, ""},
		{"5% of a tiny utilization", measure.CPU{CPUs: 8, UtilPct: 2, OtherProcessesUtilPct: 4}, ""},
		{"no process figures", measure.CPU{CPUs: 2, UtilPct: 50}, ""},
		// On one host the peer's process (pid 7) is the test's: 50% of
		// a CPU of the 60 is taken out, 10% of a CPU is 5% of 2 CPUs, 6.7%
		// of a measured 75%.
		{"the peer's process is not another process", measure.CPU{CPUs: 2, UtilPct: 75, OtherProcessesUtilPct: 60,
			OtherProcesses: []measure.TaskCPU{{ID: 7, Name: "wirespeed", UtilPct: 50}, {ID: 9, Name: "cron", UtilPct: 10}}},
			"local side: other processes used 10% of a CPU during the window (5.0% of the 2 CPUs, 7% of the 75.0% measured): the CPU utilization and service demand include them (busiest: cron, pid 9, 10% of a CPU)"},
	}
	peer := &measure.CPU{PID: 7}
	for _, tt := range tests {
		if got := OthersWarning(Local, &tt.c, peer); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
