package report

import (
	"fmt"
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// TestLimitText renders one limit of each kind, with its short form for
// the tables, into limits-v.txt.golden, and the default text's lines of
// each into limits.txt.golden.
func TestLimitText(t *testing.T) {
	ls := []result.Limit{
		{Kind: result.LimitLink, Side: result.Local, Evidence: result.LimitEvidence{Rate: &result.LimitRate{Source: "qdisc", Qdisc: "tbf", Interface: "wst-b", Side: result.Local,
			BitsPerSecond: 50e6, AllowedBitsPerSecond: 50e6 * 1448 / 1514, GoodputPct: 99.3}}},
		{Kind: result.LimitLink, Side: result.Remote, Evidence: result.LimitEvidence{Rate: &result.LimitRate{Source: "interface_speed", Interface: "eth1", Side: result.Remote,
			BitsPerSecond: 1e9, AllowedBitsPerSecond: 1e9 * 1448 / 1538, GoodputPct: 99.4}}},
		{Kind: result.LimitRateCap, Evidence: result.LimitEvidence{Rate: &result.LimitRate{Source: "fq_rate", BitsPerSecond: 100e6, AllowedBitsPerSecond: 96.5e6, GoodputPct: 98.1}}},
		{Kind: result.LimitSenderCPU, Evidence: result.LimitEvidence{CPU: &result.LimitCPU{CPU: 1, UtilPct: 99.6, SystemPct: 38, SoftIRQPct: 61, UserPct: 0.6}}},
		{Kind: result.LimitReceiveWindow, Evidence: result.LimitEvidence{TCP: &result.LimitTCP{RwndLimitedPct: 83.4, RcvBufBytes: 4608}}},
		{Kind: result.LimitSendBuffer, Evidence: result.LimitEvidence{TCP: &result.LimitTCP{SndbufLimitedPct: 71, SndBufBytes: 16384}}},
		{Kind: result.LimitCongestion, Evidence: result.LimitEvidence{TCP: &result.LimitTCP{RetransPct: 2.04, Retransmits: 2762}}},
		{Kind: result.LimitOtherProcesses, Side: result.Local, Evidence: result.LimitEvidence{
			CPU:    &result.LimitCPU{CPU: 1, UtilPct: 100, ThreadPct: 31, ThreadWaitPct: 62},
			Others: &result.LimitOthers{Side: result.Local, UtilPct: 68, HostPct: 34, Busiest: []measure.TaskCPU{{ID: 4321, Name: "busyloop", UtilPct: 66, LastCPU: 1}}}}},
		{Kind: result.LimitRequesterCPU, Evidence: result.LimitEvidence{CPU: &result.LimitCPU{CPU: 0, UtilPct: 98, UserPct: 40, SystemPct: 58, ThreadPct: 96}}},
		{Kind: result.LimitResponderCPU},
		{Kind: result.LimitLatency, Evidence: result.LimitEvidence{RTT: &result.LimitRTT{MeanMicros: 50, InFlight: 4, PredictedPerSecond: 80000, AchievedPct: 97.5}}},
		{Kind: result.LimitUnknown, Notes: []result.Warning{result.Coded(result.NoteNothingReceived, nil, nil)}},
	}
	var b, lines strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "%-9s %s\n", LimitShort(&l), LimitText(&l))
		// The default text's line, alone and in a run of two directions.
		fmt.Fprintln(&lines, limitLine("limited by: ", &l))
		fmt.Fprintln(&lines, limitLine("limited by (client->server): ", &l))
	}
	fmt.Fprintf(&b, "%-9s (no limit recorded)\n", LimitShort(nil))
	testkit.Golden(t, "limits-v.txt.golden", b.String())
	testkit.Golden(t, "limits.txt.golden", lines.String())
	for _, l := range ls {
		if n := len(LimitShort(&l)); n > 8 {
			t.Errorf("%s: short form %q is %d characters, the columns hold 8", l.Kind, LimitShort(&l), n)
		}
	}
}
