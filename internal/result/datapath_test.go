package result

import (
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
)

// TestJoinDataPath: each side's record lands in the result, the achieved
// rate is set beside the pacing cap, and what a side could not do becomes
// a warning.
func TestJoinDataPath(t *testing.T) {
	sp := spec.Default()
	sp.ZeroCopy, sp.FQRateBitsPerSecond = spec.ZeroCopyMsg, 1e9
	flow := func(side Side, role Role, bytes int64) Flow {
		return Flow{Direction: spec.ClientToServer, Side: side, Role: role, ElapsedS: 1, Bytes: bytes,
			Streams: []StreamSide{{ID: 1, Side: side, Role: role, Bytes: bytes}}}
	}
	local := SideResult{Side: Local, Flows: []Flow{flow(Local, Sender, 2e8)},
		DataPath: &DataPath{ZeroCopy: spec.ZeroCopyOff, ZeroCopyNote: "--zerocopy msg: the kernel refused MSG_ZEROCOPY",
			Pacing: &Pacing{AskedBitsPerSecond: 1e9, HonouredBy: "tcp"}}}
	remote := SideResult{Side: Remote, Flows: []Flow{flow(Remote, Receiver, 2e8)}}

	res := Join(sp, local, remote)
	if res.Local.DataPath == nil || res.Remote.DataPath != nil {
		t.Fatalf("local record %v, remote %v", res.Local.DataPath, res.Remote.DataPath)
	}
	if got := res.Local.DataPath.Pacing.AchievedBitsPerSecond; got != 1.6e9 {
		t.Errorf("achieved %g bit/s, want the stream's 1.6e9", got)
	}
	want := []string{"refused MSG_ZEROCOPY", "reached 1.60 Gbits/sec against a pacing cap of 1.00 Gbits/sec", "remote side: no data path record"}
	all := strings.Join(Texts(res.Warnings), "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}

	// No option asked: no record, no warning.
	res = Join(spec.Default(), SideResult{Side: Local, Flows: []Flow{flow(Local, Sender, 1)}}, SideResult{Side: Remote, Flows: []Flow{flow(Remote, Receiver, 1)}})
	if res.Local.DataPath != nil || len(Texts(res.Warnings)) != 0 {
		t.Errorf("plain run: record %v, warnings %q", res.Local.DataPath, Texts(res.Warnings))
	}
}

func TestAddCPUUtil(t *testing.T) {
	dp := &DataPath{PinnedCPUs: []PinnedCPU{{CPU: 3}, {CPU: 1}}}
	dp.AddCPUUtil(&measure.CPU{PerCPUIDs: []int{0, 1, 3}, PerCPUUtilPct: []float64{10, 20, 30}})
	if u := dp.PinnedCPUs[0].UtilPct; u == nil || *u != 30 {
		t.Errorf("cpu 3: %v, want 30", u)
	}
	if u := dp.PinnedCPUs[1].UtilPct; u == nil || *u != 20 {
		t.Errorf("cpu 1: %v, want 20", u)
	}
	var none *DataPath
	none.AddCPUUtil(&measure.CPU{}) // nil-safe
}
