package spec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidateAmountAndRate(t *testing.T) {
	checkValidate(t, []validateCase{
		{name: "bytes", mod: func(t *Test) { t.AmountBytes = 100 << 20 }},
		{name: "blocks", mod: func(t *Test) { t.AmountBlocks = 1000 }},
		{name: "udp bytes", mod: func(t *Test) { t.Kind = UDPStream; t.SendSize = 1472; t.AmountBytes = 1 }},
		{name: "bidir", mod: func(t *Test) { t.Kind = TCPBidir; t.AmountBytes = 1 << 20 }},
		{name: "both", mod: func(t *Test) { t.AmountBytes = 1; t.AmountBlocks = 1 }, wantErr: "not both"},
		{name: "negative", mod: func(t *Test) { t.AmountBytes = -1 }, wantErr: "-n"},
		{name: "huge", mod: func(t *Test) { t.AmountBytes = MaxAmount + 1 }, wantErr: "-n"},
		{name: "huge blocks", mod: func(t *Test) { t.AmountBlocks = MaxAmount }, wantErr: "-k"},
		{name: "rr", mod: func(t *Test) { t.Kind = TCPRR; t.AmountBytes = 1 }, wantErr: "TCP_RR runs for its length"},
		{name: "omit", mod: func(t *Test) { t.AmountBytes = 1; t.Omit = time.Second }, wantErr: "--omit"},
		{name: "fewer bytes than streams", mod: func(t *Test) { t.AmountBytes = 2; t.Parallel = 3 }, wantErr: "-P"},
		{name: "zerocopy", mod: func(t *Test) { t.AmountBytes = 1; t.ZeroCopy = ZeroCopySendfile }, wantErr: "--zerocopy"},
		{name: "tcp rate", mod: func(t *Test) { t.RateBitsPerSecond = 200e6 }},
		{name: "maerts rate", mod: func(t *Test) { t.Kind = TCPMaerts; t.RateBitsPerSecond = 200e6 }},
		{name: "rr rate", mod: func(t *Test) { t.Kind = TCPRR; t.RateBitsPerSecond = 1e6 }, wantErr: "not paced"},
		{name: "tcp rate zerocopy", mod: func(t *Test) { t.RateBitsPerSecond = 1e6; t.ZeroCopy = ZeroCopyMsg }, wantErr: "--zerocopy"},
		// A tiny positive rate overflowed the pacers' schedule and made
		// them spin (issue 32): the smallest rate is a byte a second.
		{name: "udp rate 1e-300", mod: func(t *Test) { t.Kind = UDPStream; t.SendSize = 1472; t.RateBitsPerSecond = 1e-300 }, wantErr: "-b"},
		{name: "udp rate 1e-8", mod: func(t *Test) { t.Kind = UDPStream; t.SendSize = 1472; t.RateBitsPerSecond = 1e-8 }, wantErr: "-b"},
		{name: "tcp rate 1e-12", mod: func(t *Test) { t.RateBitsPerSecond = 1e-12 }, wantErr: "-b"},
		{name: "rate under a byte a second", mod: func(t *Test) { t.RateBitsPerSecond = MinRate - 0.5 }, wantErr: "-b"},
		{name: "rate of a byte a second", mod: func(t *Test) { t.Kind = UDPStream; t.SendSize = MaxDatagram; t.RateBitsPerSecond = MinRate }},
	})
}

// TestAmountShare: the streams' shares add up to the amount (whole
// datagrams for UDP), worked out by hand.
func TestAmountShare(t *testing.T) {
	tests := []struct {
		name string
		sp   Test
		want []int64
	}{
		{"one stream", Test{Kind: TCPStream, Parallel: 1, SendSize: 1000, AmountBytes: 12345}, []int64{12345}},
		{"uneven", Test{Kind: TCPStream, Parallel: 3, SendSize: 1000, AmountBytes: 100}, []int64{34, 33, 33}},
		{"blocks", Test{Kind: TCPStream, Parallel: 2, SendSize: 65536, AmountBlocks: 1000}, []int64{32768000, 32768000}},
		{"udp whole datagrams", Test{Kind: UDPStream, Parallel: 1, SendSize: 1472, AmountBytes: 10 << 20}, []int64{7124 * 1472}},
		{"udp two streams", Test{Kind: UDPStream, Parallel: 2, SendSize: 1000, AmountBytes: 2500}, []int64{2000, 2000}},
		{"none", Test{Kind: TCPStream, Parallel: 2, SendSize: 1000}, []int64{0, 0}},
	}
	for _, tt := range tests {
		var got []int64
		for i := range tt.sp.Parallel {
			got = append(got, tt.sp.AmountShare(i))
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}

func TestAmountJSON(t *testing.T) {
	sp := Default()
	sp.AmountBlocks = 1000
	sp.RateBitsPerSecond = 2e8
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"amount_blocks":1000`) || strings.Contains(string(b), "amount_bytes") {
		t.Errorf("%s: want amount_blocks and no amount_bytes", b)
	}
	var got Test
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(sp, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}
