package iperf3_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/iperf3"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// TestSockOptsToIperf3Server runs against a real iperf3 server with
// --dscp EF, --mss 1000 and --cport: the server's own JSON says it was
// asked for TOS 184 and MSS 1000 and saw the data connection come from
// the client port, and this side's kernel holds its segments to the MSS.
func TestSockOptsToIperf3Server(t *testing.T) {
	cport := testkit.FreePorts(t, 1)
	sp := spec.Default()
	sp.Duration, sp.Interval, sp.CongestionControl = time.Second, 0, "cubic"
	sp.TOS, sp.MSS, sp.ClientPort = 46<<2, 1000, cport
	res, out := runAgainstIperf3Server(t, sp)
	var doc struct {
		Start struct {
			TCPMSS    int `json:"tcp_mss"`
			TestStart struct {
				TOS int `json:"tos"`
			} `json:"test_start"`
			Connected []struct {
				RemotePort int `json:"remote_port"`
			} `json:"connected"`
		} `json:"start"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("iperf3's JSON: %v\n%s", err, out)
	}
	s := doc.Start
	if s.TestStart.TOS != 184 || s.TCPMSS != 1000 || len(s.Connected) != 1 || s.Connected[0].RemotePort != cport {
		t.Errorf("iperf3 server's start: tos %d, tcp_mss %d, connected %+v; want 184, 1000 and one stream from port %d", s.TestStart.TOS, s.TCPMSS, s.Connected, cport)
	}
	if len(res.Streams) != 1 || res.Streams[0].Sender.TCPInfo == nil || res.Streams[0].Sender.TCPInfo.SndMSS > 1000 {
		t.Errorf("this side's sender: want snd_mss at most 1000 in TCP_INFO: %+v", res.Streams)
	}
}

func TestCheckTestMSS(t *testing.T) {
	sp := spec.Default()
	sp.MSS = 9217
	if err := iperf3.CheckTest(sp); err == nil || !strings.Contains(err.Error(), "at most 9216") {
		t.Errorf("CheckTest(--mss 9217) = %v, want iperf3's bound", err)
	}
	sp.MSS = 9216
	if err := iperf3.CheckTest(sp); err != nil {
		t.Errorf("CheckTest(--mss 9216) = %v", err)
	}
}
