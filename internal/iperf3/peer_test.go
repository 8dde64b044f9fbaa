package iperf3

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/measure"
)

// TestIperf3ServerNotOther: run --iperf3 against a server on this host
// does not count that server's CPU as other processes': 130% of a CPU by
// others, 90 of it the iperf3 server's, leaves 40 and the one other
// process; a server elsewhere leaves the figures alone. The host's
// figure of 200% (processes that came and went in it too) leaves 110.
func TestIperf3ServerNotOther(t *testing.T) {
	for _, tc := range []struct {
		addr           string
		want, wantHost float64
	}{{"127.0.0.1:5201", 40, 110}, {"[::1]:5201", 40, 110}, {"localhost:5201", 40, 110}, {"10.0.0.2:5201", 130, 200}} {
		c := &measure.CPU{OtherProcessesUtilPct: 130, OtherProcessesHostUtilPct: 200,
			OtherProcesses: []measure.TaskCPU{{ID: 7, Name: "iperf3", UtilPct: 90}, {ID: 8, Name: "make", UtilPct: 40}}}
		if onThisHost(tc.addr) {
			peerNotOther(c, "iperf3")
		}
		if c.OtherProcessesUtilPct != tc.want || c.OtherProcessesHostUtilPct != tc.wantHost {
			t.Errorf("%s: other processes %.0f%%, on the host %.0f%%, want %.0f%% and %.0f%%", tc.addr,
				c.OtherProcessesUtilPct, c.OtherProcessesHostUtilPct, tc.want, tc.wantHost)
		}
		if tc.want == 40 {
			if d := cmp.Diff([]measure.TaskCPU{{ID: 8, Name: "make", UtilPct: 40}}, c.OtherProcesses); d != "" {
				t.Errorf("%s: (-want +got)\n%s", tc.addr, d)
			}
		}
	}
}
