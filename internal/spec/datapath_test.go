package spec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateDataPath(t *testing.T) {
	udp := func(t *Test) { t.Kind = UDPStream; t.SendSize = DefaultUDPSize }
	checkValidate(t, []validateCase{
		{name: "pinned", mod: func(t *Test) { t.LocalCPUs = "0:1"; t.RemoteCPUs = "1" }},
		{name: "cpu too high", mod: func(t *Test) { t.LocalCPUs = NewCPUList([]int{MaxCPU + 1}) }, wantErr: "local CPU"},
		{name: "negative remote cpu", mod: func(t *Test) { t.RemoteCPUs = "-1" }, wantErr: "remote CPU"},
		{name: "cpu junk", mod: func(t *Test) { t.LocalCPUs = "0:x" }, wantErr: "not a CPU number"},
		{name: "sendfile", mod: func(t *Test) { t.ZeroCopy = ZeroCopySendfile }},
		{name: "msg maerts", mod: func(t *Test) { t.Kind = TCPMaerts; t.ZeroCopy = ZeroCopyMsg }},
		{name: "old spec zerocopy", mod: func(t *Test) { t.ZeroCopy = ""; t.Rx = "" }},
		{name: "zerocopy udp", mod: func(t *Test) { udp(t); t.ZeroCopy = ZeroCopyMsg }, wantErr: "TCP stream tests"},
		{name: "zerocopy rr", mod: func(t *Test) { t.Kind = TCPRR; t.ZeroCopy = ZeroCopySendfile }, wantErr: "not to TCP_RR"},
		{name: "zerocopy unknown", mod: func(t *Test) { t.ZeroCopy = "splice" }, wantErr: "copy, sendfile, msg"},
		{name: "rx splice bidir", mod: func(t *Test) { t.Kind = TCPBidir; t.Rx = RxSplice }},
		{name: "rx discard", mod: func(t *Test) { t.Rx = RxDiscard }},
		{name: "rx discard udp", mod: func(t *Test) { udp(t); t.Rx = RxDiscard }, wantErr: "TCP stream tests"},
		{name: "rx unknown", mod: func(t *Test) { t.Rx = "trunc" }, wantErr: "copy, splice, discard"},
		{name: "fq-rate tcp", mod: func(t *Test) { t.FQRateBitsPerSecond = 1e9 }},
		{name: "fq-rate udp", mod: func(t *Test) { udp(t); t.FQRateBitsPerSecond = 1e8 }},
		{name: "fq-rate rr", mod: func(t *Test) { t.Kind = UDPRR; t.FQRateBitsPerSecond = 1e8 }, wantErr: "stream tests"},
		{name: "fq-rate tiny", mod: func(t *Test) { t.FQRateBitsPerSecond = 1 }, wantErr: "one byte per second"},
		{name: "fq-rate negative", mod: func(t *Test) { t.FQRateBitsPerSecond = -1 }, wantErr: "fq-rate"},
		{name: "busy-poll rr", mod: func(t *Test) { t.Kind = TCPRR; t.BusyPollMicros = 50 }},
		{name: "busy-poll crr", mod: func(t *Test) { t.Kind = TCPCRR; t.BusyPollMicros = 50 }},
		{name: "busy-poll stream", mod: func(t *Test) { t.BusyPollMicros = 50 }, wantErr: "request/response"},
		{name: "busy-poll negative", mod: func(t *Test) { t.Kind = TCPRR; t.BusyPollMicros = -1 }, wantErr: "busy-poll"},
		{name: "gro", mod: func(t *Test) { udp(t); t.GRO = true }},
		{name: "gro tcp", mod: func(t *Test) { t.GRO = true }, wantErr: "--gro applies to UDP_STREAM"},
		{name: "gso", mod: func(t *Test) { udp(t); t.GSOSize = 1472; t.SendSize = 44 * 1472 }},
		{name: "gso short tail ok", mod: func(t *Test) { udp(t); t.GSOSize = 1000; t.SendSize = 10016 }},
		{name: "gso tcp", mod: func(t *Test) { t.GSOSize = 1472 }, wantErr: "--gso applies to UDP_STREAM"},
		{name: "gso too small", mod: func(t *Test) { udp(t); t.GSOSize = 8 }, wantErr: "GSO datagram size"},
		{name: "gso above send", mod: func(t *Test) { udp(t); t.GSOSize = 2000 }, wantErr: "at least one"},
		{name: "gso too many", mod: func(t *Test) { udp(t); t.GSOSize = 100; t.SendSize = 6500 }, wantErr: "at most 64"},
		{name: "gso tail too short", mod: func(t *Test) { udp(t); t.GSOSize = 1000; t.SendSize = 10008 }, wantErr: "use -m 10000"},
		// UDP batches (issue 15).
		{name: "send batch", mod: func(t *Test) { udp(t); t.SendBatch = MaxUDPBatch; t.RecvBatch = 1 }},
		{name: "batch unset", mod: func(t *Test) { udp(t); t.SendBatch, t.RecvBatch = 0, 0 }},
		{name: "send batch tcp", mod: func(t *Test) { t.SendBatch = 2 }, wantErr: "--send-batch applies to UDP_STREAM"},
		{name: "recv batch rr", mod: func(t *Test) { t.Kind = UDPRR; t.RecvBatch = 2 }, wantErr: "--recv-batch applies to UDP_STREAM"},
		{name: "send batch too big", mod: func(t *Test) { udp(t); t.SendBatch = MaxUDPBatch + 1 }, wantErr: "--send-batch 65 must be between 1"},
		{name: "recv batch negative", mod: func(t *Test) { udp(t); t.RecvBatch = -1 }, wantErr: "--recv-batch -1 must be between 1"},
	})
}

func TestParseCPUs(t *testing.T) {
	tests := []struct {
		in            string
		local, remote CPUList
		wantErr       string
	}{
		{in: "0", local: "0"},
		{in: "0,1", local: "0", remote: "1"},
		{in: ",1", remote: "1"},
		{in: "0:1,1:0", local: "0:1", remote: "1:0"},
		{in: "0-3,4-5:7", local: "0:1:2:3", remote: "4:5:7"},
		{in: "", wantErr: "names no CPU"},
		{in: ",", wantErr: "names no CPU"},
		{in: "0,1,2", wantErr: "LOCAL[,REMOTE]"},
		{in: "x", wantErr: "not a CPU number"},
		{in: "3-1", wantErr: "backwards"},
		{in: "0,2000", wantErr: "remote"},
	}
	for _, tt := range tests {
		l, r, err := ParseCPUs(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCPUs(%q): got %v, want an error about %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCPUs(%q): %v", tt.in, err)
			continue
		}
		if l != tt.local || r != tt.remote {
			t.Errorf("ParseCPUs(%q) = %q, %q; want %q, %q", tt.in, l, r, tt.local, tt.remote)
		}
	}
	if d := cmp.Diff([]int{0, 1, 3}, NewCPUList([]int{0, 1, 3}).CPUs()); d != "" {
		t.Errorf("CPUs (-want +got):\n%s", d)
	}
}

func TestStreamCPU(t *testing.T) {
	if _, ok := CPUList("").StreamCPU(0); ok {
		t.Error("an empty list pins")
	}
	cpus := CPUList("2:5")
	for i, want := range []int{2, 5, 2, 5} {
		if got, ok := cpus.StreamCPU(i); !ok || got != want {
			t.Errorf("stream %d: cpu %d, want %d", i, got, want)
		}
	}
}

func TestGSOSendSize(t *testing.T) {
	for _, tt := range []struct{ gso, want int }{{1472, 44 * 1472}, {1000, 64 * 1000}, {65507, 65507}, {0, DefaultUDPSize}} {
		if got := GSOSendSize(tt.gso); got != tt.want {
			t.Errorf("GSOSendSize(%d) = %d, want %d", tt.gso, got, tt.want)
		}
		sp := Default()
		sp.Kind, sp.GSOSize, sp.SendSize = UDPStream, tt.gso, GSOSendSize(tt.gso)
		if err := sp.Validate(); err != nil {
			t.Errorf("GSOSendSize(%d): %v", tt.gso, err)
		}
	}
}

// TestDataPathJSON: the options round-trip, appear under their names, and
// a spec from before them reads as copying.
func TestDataPathJSON(t *testing.T) {
	sp := Default()
	sp.LocalCPUs, sp.RemoteCPUs = "0:1", "1"
	sp.ZeroCopy, sp.Rx = ZeroCopyMsg, RxSplice
	sp.FQRateBitsPerSecond = 1e9
	sp.SendBatch, sp.RecvBatch = 64, 8
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"local_cpus":[0,1]`, `"remote_cpus":[1]`, `"zerocopy":"msg"`, `"rx":"splice"`, `"fq_rate_bps":1000000000`, `"send_batch":64`, `"recv_batch":8`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var got Test
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(sp, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if b, _ := json.Marshal(Default()); !strings.Contains(string(b), `"zerocopy":"copy"`) || strings.Contains(string(b), "gso") || strings.Contains(string(b), "batch") {
		t.Errorf("default spec %s: want zerocopy copy and no gso, no batch", b)
	}
	if err := json.Unmarshal([]byte(`{"test":"TCP_STREAM","duration_s":1,"send_size":1,"recv_size":1,"parallel":1,"payload":{"kind":"zeros"}}`), &got); err != nil {
		t.Fatal(err)
	}
	// A spec from before the options copies: "" is read as copy.
	if err := got.Validate(); err != nil || got.SendMode() != ZeroCopyOff || got.RxMode() != RxCopy {
		t.Errorf("old spec: %v, zerocopy %q rx %q, want copy", err, got.SendMode(), got.RxMode())
	}
	if got.SendsPerCall() != 1 || got.DatagramsPerRecvCall() != 1 {
		t.Errorf("old spec: %d sends, %d datagrams per call; want one each", got.SendsPerCall(), got.DatagramsPerRecvCall())
	}
}
