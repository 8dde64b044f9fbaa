package cli

import (
	"context"
	"encoding/json"
	"testing"
)

// TestSockOptUsageErrors: a socket option that is malformed, conflicts
// with another or does not apply to the test is a one-line usage error
// naming it.
func TestSockOptUsageErrors(t *testing.T) {
	checkUsageErrors(t, []usageCase{
		{[]string{"run", "--tos", "0xb8", "--dscp", "EF"}, "--tos and --dscp both set the TOS byte"},
		{[]string{"run", "--dscp", "EF", "--tos", "184"}, "--tos and --dscp both set the TOS byte"},
		{[]string{"run", "--tos", "300"}, "0 to 255"},
		{[]string{"run", "--dscp", "AF44"}, "EF, AF11..AF43"},
		{[]string{"run", "--dscp", "64"}, "0 to 63"},
		{[]string{"run", "--mss", "50"}, "MSS 50 must be between 88 and 32767"},
		{[]string{"run", "-t", "udp_stream", "--mss", "1000"}, "is UDP"},
		{[]string{"run", "--dont-fragment"}, "--dont-fragment applies to the UDP tests"},
		{[]string{"run", "-t", "tcp_crr", "--cport", "5001"}, "--cport cannot apply to TCP_CRR"},
		{[]string{"run", "--cport", "65535", "-P", "2"}, "beyond 65535"},
		{[]string{"run", "-B", "myhost"}, "not an IP address"},
		{[]string{"run", "-4", "-B", "::1"}, "IPv4 only"},
		{[]string{"run", "--bind-dev", "a/b"}, "not an interface name"},
		{[]string{"sweep", "--dont-fragment"}, "--dont-fragment applies to the UDP tests"},
	})
}

// TestRunSockOptsJSON: the options are recorded in the document's spec,
// and the kernel's MSS in TCP_INFO follows --mss, on the embedded
// loopback server.
func TestRunSockOptsJSON(t *testing.T) {
	code, out, errOut := execute(t, context.Background(), "run", "-l", "0.3", "-i", "0", "--cc", "cubic",
		"-B", "127.0.0.1", "--dscp", "AF41", "--mss", "1200", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Spec struct {
			BindAddr string `json:"bind_addr"`
			TOS      int    `json:"tos"`
			MSS      int    `json:"mss"`
		}
		Streams []struct {
			Sender struct {
				TCPInfo struct {
					SndMSS int `json:"snd_mss"`
				} `json:"tcp_info"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// AF41 is code point 34, TOS byte 34*4 = 136.
	if doc.Spec.BindAddr != "127.0.0.1" || doc.Spec.TOS != 136 || doc.Spec.MSS != 1200 {
		t.Errorf("spec %+v, want bind_addr 127.0.0.1, tos 136, mss 1200", doc.Spec)
	}
	if len(doc.Streams) != 1 || doc.Streams[0].Sender.TCPInfo.SndMSS <= 0 || doc.Streams[0].Sender.TCPInfo.SndMSS > 1200 {
		t.Errorf("streams %+v: want one whose sender's snd_mss is at most 1200", doc.Streams)
	}
}
