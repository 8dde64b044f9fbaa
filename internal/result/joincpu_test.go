package result

import (
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
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
	if len(Texts(res.Warnings)) != 0 {
		t.Errorf("warnings %q", Texts(res.Warnings))
	}

	remote.CPU = nil
	remote.CPUError = "read cpu times: open /x/stat: no such file"
	res = Join(sp, local, remote)
	if res.Summary.RemoteCPU != nil || len(Texts(res.Warnings)) != 1 || Texts(res.Warnings)[0] != "remote side: no CPU figures: read cpu times: open /x/stat: no such file" {
		t.Errorf("remote without CPU: %v, warnings %q", res.Summary.RemoteCPU, Texts(res.Warnings))
	}
	sp.CPU = false
	local.CPU = nil
	if res := Join(sp, local, remote); len(Texts(res.Warnings)) != 0 {
		t.Errorf("CPU not asked, yet warnings %q", Texts(res.Warnings))
	}
}

// TestJoinCPUCarriesBaseline: each side's CPU figures carry the idle
// baseline of that side's env record, and only that side's.
func TestJoinCPUCarriesBaseline(t *testing.T) {
	var res Result
	res.Spec.CPU = true
	local := SideResult{Side: Local, CPU: &measure.CPU{CPUs: 2, UtilPct: 10},
		Env: &sysinfo.Env{CPUBaseline: &measure.CPUBaseline{UtilPct: 3, WindowS: 0.2}}}
	remote := SideResult{Side: Remote, CPU: &measure.CPU{CPUs: 2, UtilPct: 10}, Env: &sysinfo.Env{}}
	joinCPU(&res, local, remote)
	if b := res.Summary.LocalCPU.Baseline; b == nil || b.UtilPct != 3 || b.WindowS != 0.2 {
		t.Errorf("local baseline = %+v, want 3%% over 0.2s", b)
	}
	if b := res.Summary.RemoteCPU.Baseline; b != nil {
		t.Errorf("remote baseline = %+v, want none", b)
	}
}

// TestMeanCPUKeepsBaseline: the mean of iterations keeps the session's
// idle baseline, so the iterated CPU line shows it as a single run's does.
func TestMeanCPUKeepsBaseline(t *testing.T) {
	b := measure.CPUBaseline{UtilPct: 2.5, WindowS: 0.2}
	m := MeanCPU([]measure.CPU{{CPUs: 2, UtilPct: 10, Baseline: &b, OtherProcessesUtilPct: 40},
		{CPUs: 2, UtilPct: 30, Baseline: &b, OtherProcessesUtilPct: 20, PID: 5, OtherProcesses: []measure.TaskCPU{{ID: 9, UtilPct: 20}}}})
	if m.UtilPct != 20 || m.Baseline == nil || *m.Baseline != b {
		t.Errorf("mean %+v baseline %+v, want 20%% and %+v", m, m.Baseline, b)
	}
	// Other processes: the mean of 40 and 20, the last one's list and pid.
	if m.OtherProcessesUtilPct != 30 || m.PID != 5 || len(m.OtherProcesses) != 1 || m.OtherProcesses[0].ID != 9 {
		t.Errorf("other processes %.1f%% %+v (pid %d), want 30%%, the last iteration's list and pid 5", m.OtherProcessesUtilPct, m.OtherProcesses, m.PID)
	}
}
