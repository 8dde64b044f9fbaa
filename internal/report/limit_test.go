package report

import (
	"fmt"
	"strings"
	"testing"

	"wirespeed/internal/run"
)

// TestLimitText renders one limit of each kind, with its short form for
// the tables, into limits.txt.golden.
func TestLimitText(t *testing.T) {
	ls := []run.Limit{
		{Kind: run.LimitLink, Side: run.Local, Evidence: run.LimitEvidence{Rate: &run.LimitRate{Source: "qdisc", Qdisc: "tbf", Interface: "wst-b", Side: run.Local,
			BitsPerSecond: 50e6, AllowedBitsPerSecond: 50e6 * 1448 / 1514, GoodputPct: 99.3}}},
		{Kind: run.LimitLink, Side: run.Remote, Evidence: run.LimitEvidence{Rate: &run.LimitRate{Source: "interface_speed", Interface: "eth1", Side: run.Remote,
			BitsPerSecond: 1e9, AllowedBitsPerSecond: 1e9 * 1448 / 1538, GoodputPct: 99.4}}},
		{Kind: run.LimitRateCap, Evidence: run.LimitEvidence{Rate: &run.LimitRate{Source: "fq_rate", BitsPerSecond: 100e6, AllowedBitsPerSecond: 96.5e6, GoodputPct: 98.1}}},
		{Kind: run.LimitSenderCPU, Evidence: run.LimitEvidence{CPU: &run.LimitCPU{CPU: 1, UtilPct: 99.6, SystemPct: 38, SoftIRQPct: 61, UserPct: 0.6}}},
		{Kind: run.LimitReceiveWindow, Evidence: run.LimitEvidence{TCP: &run.LimitTCP{RwndLimitedPct: 83.4, RcvBufBytes: 4608}}},
		{Kind: run.LimitSendBuffer, Evidence: run.LimitEvidence{TCP: &run.LimitTCP{SndbufLimitedPct: 71, SndBufBytes: 16384}}},
		{Kind: run.LimitCongestion, Evidence: run.LimitEvidence{TCP: &run.LimitTCP{RetransPct: 2.04, Retransmits: 2762}}},
		{Kind: run.LimitOtherProcesses, Side: run.Local, Evidence: run.LimitEvidence{
			CPU:    &run.LimitCPU{CPU: 1, UtilPct: 100, ThreadPct: 31, ThreadWaitPct: 62},
			Others: &run.LimitOthers{Side: run.Local, UtilPct: 68, HostPct: 34, Busiest: []run.TaskCPU{{ID: 4321, Name: "busyloop", UtilPct: 66, LastCPU: 1}}}}},
		{Kind: run.LimitRequesterCPU, Evidence: run.LimitEvidence{CPU: &run.LimitCPU{CPU: 0, UtilPct: 98, UserPct: 40, SystemPct: 58, ThreadPct: 96}}},
		{Kind: run.LimitResponderCPU},
		{Kind: run.LimitLatency, Evidence: run.LimitEvidence{RTT: &run.LimitRTT{MeanMicros: 50, InFlight: 4, PredictedPerSecond: 80000, AchievedPct: 97.5}}},
		{Kind: run.LimitUnknown, Notes: []string{"nothing was received in the window"}},
	}
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "%-9s %s\n", LimitShort(&l), LimitText(&l))
	}
	fmt.Fprintf(&b, "%-9s (no limit recorded)\n", LimitShort(nil))
	golden(t, "limits.txt", b.String())
	for _, l := range ls {
		if n := len(LimitShort(&l)); n > 8 {
			t.Errorf("%s: short form %q is %d characters, the columns hold 8", l.Kind, LimitShort(&l), n)
		}
	}
}
