package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"wirespeed/internal/spec"
)

// TestDataPathFlags: the flags land in the spec; -m follows --gso when it
// is not given.
func TestDataPathFlags(t *testing.T) {
	tests := []struct {
		args []string
		want func(*spec.Test)
	}{
		{[]string{"-T", "0,1"}, func(t *spec.Test) { t.LocalCPUs, t.RemoteCPUs = "0", "1" }},
		{[]string{"--pin", "0:1,1:0", "-P", "2"}, func(t *spec.Test) { t.LocalCPUs, t.RemoteCPUs, t.Parallel = "0:1", "1:0", 2 }},
		{[]string{"--zerocopy", "msg", "--rx", "splice"}, func(t *spec.Test) { t.ZeroCopy, t.Rx = spec.ZeroCopyMsg, spec.RxSplice }},
		{[]string{"--zerocopy", "sendfile", "--rx", "discard", "--fq-rate", "1G"}, func(t *spec.Test) {
			t.ZeroCopy, t.Rx, t.FQRateBitsPerSecond = spec.ZeroCopySendfile, spec.RxDiscard, 1e9
		}},
		{[]string{"-t", "tcp_rr", "--busy-poll", "50"}, func(t *spec.Test) { t.Kind, t.BusyPollMicros = spec.TCPRR, 50 }},
		{[]string{"-t", "udp_stream", "--gso", "1472", "--gro"}, func(t *spec.Test) {
			t.Kind, t.GSOSize, t.GRO, t.SendSize, t.SendBatch, t.RecvBatch = spec.UDPStream, 1472, true, 44*1472, 1, 1
		}},
		{[]string{"-t", "udp_stream", "--gso", "1000", "-m", "8000"}, func(t *spec.Test) {
			t.Kind, t.GSOSize, t.SendSize, t.SendBatch, t.RecvBatch = spec.UDPStream, 1000, 8000, 1, 1
		}},
		// UDP batches (issue 15): one datagram per call unless asked,
		// recorded for UDP_STREAM only.
		{[]string{"-t", "udp_stream"}, func(t *spec.Test) { t.Kind, t.SendSize, t.SendBatch, t.RecvBatch = spec.UDPStream, 1472, 1, 1 }},
		{[]string{"-t", "udp_stream", "--send-batch", "64", "--recv-batch", "8"}, func(t *spec.Test) {
			t.Kind, t.SendSize, t.SendBatch, t.RecvBatch = spec.UDPStream, 1472, 64, 8
		}},
		{[]string{"-t", "tcp_stream", "--send-batch", "1"}, func(t *spec.Test) {}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f := &runFlags{spec: spec.Default()}
			cmd := newRunCmd(&env{stdout: io.Discard, stderr: io.Discard})
			cmd.ResetFlags()
			addRunFlags(cmd, f)
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			f.changed = cmd.Flags().Changed
			got, err := f.buildSpec()
			if err != nil {
				t.Fatal(err)
			}
			want := got
			want.LocalCPUs, want.RemoteCPUs, want.ZeroCopy, want.Rx = "", "", spec.ZeroCopyOff, spec.RxCopy
			want.FQRateBitsPerSecond, want.BusyPollMicros, want.GSOSize, want.GRO = 0, 0, 0, false
			want.SendBatch, want.RecvBatch = 0, 0
			tt.want(&want)
			if got != want {
				t.Errorf("spec\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestDataPathUsageErrors: an option on a test it does not apply to, or a
// malformed one, is a usage error naming it.
func TestDataPathUsageErrors(t *testing.T) {
	checkUsageErrors(t, []usageCase{
		{[]string{"run", "-T", "x"}, "not a CPU number"},
		{[]string{"run", "-T", "0,1,2"}, "LOCAL[,REMOTE]"},
		{[]string{"run", "--zerocopy", "fast"}, "copy, sendfile, msg"},
		{[]string{"run", "--rx", "trunc"}, "copy, splice, discard"},
		{[]string{"run", "-t", "udp_stream", "--zerocopy", "msg"}, "TCP stream tests"},
		{[]string{"run", "-t", "tcp_rr", "--rx", "splice"}, "TCP stream tests"},
		{[]string{"run", "-t", "tcp_rr", "--fq-rate", "1G"}, "--fq-rate"},
		{[]string{"run", "--busy-poll", "50"}, "request/response"},
		{[]string{"run", "--gso", "1472"}, "--gso applies to UDP_STREAM"},
		{[]string{"run", "-t", "udp_stream", "--gso", "1000", "-m", "100000"}, "datagram size"},
		{[]string{"run", "--gro"}, "--gro applies to UDP_STREAM"},
		{[]string{"run", "--send-batch", "8"}, "--send-batch applies to UDP_STREAM"},
		{[]string{"run", "-t", "udp_rr", "--recv-batch", "8"}, "--recv-batch applies to UDP_STREAM"},
		{[]string{"run", "-t", "udp_stream", "--send-batch", "65"}, "--send-batch 65 must be between 1"},
		{[]string{"run", "-t", "udp_stream", "--recv-batch", "0"}, "--recv-batch 0 must be between 1"},
		{[]string{"sweep", "-t", "udp_stream", "--zerocopy", "sendfile"}, "TCP stream tests"},
	})
}

// TestRunZeroCopyJSON: the options are in the document's spec and each
// side's record, on the embedded loopback server.
func TestRunZeroCopyJSON(t *testing.T) {
	code, out, errOut := execute(t, context.Background(), "run", "-l", "0.3", "-i", "0", "--zerocopy", "sendfile", "--rx", "discard", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Spec struct {
			ZeroCopy string `json:"zerocopy"`
			Rx       string `json:"rx"`
		}
		Local, Remote struct {
			DataPath map[string]any `json:"datapath"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Spec.ZeroCopy != "sendfile" || doc.Spec.Rx != "discard" || doc.Local.DataPath["zerocopy"] != "sendfile" || doc.Remote.DataPath["rx"] != "discard" {
		t.Errorf("spec %+v, local %v, remote %v", doc.Spec, doc.Local.DataPath, doc.Remote.DataPath)
	}
}
