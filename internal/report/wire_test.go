package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/netdev"
	"wirespeed/internal/result"
)

// TestWireLines renders a side's wire figures: the numbers are the
// figures' own, rounded as the line says.
func TestWireLines(t *testing.T) {
	res := result.Result{
		Local: result.SideInfo{Wire: &result.Wire{
			Wire: netdev.Wire{Device: "wst-b", ElapsedS: 2,
				Link:    netdev.LinkCounters{TxPackets: 1_624_000, RxPackets: 812_000, RxDropped: 2},
				Qdisc:   &netdev.QdiscWire{Kind: "tbf", SentBytes: 123456, SentPackets: 80, Drops: 4, Overlimits: 9, BacklogBytes: 0, MaxBacklogBytes: 30 * 1024},
				Ethtool: map[string]int64{"tx_tso_packets": 12, "rx_csum_complete": 7}},
			TxPacketsPerSecond: 812_000, TxBytesPerPacket: 1514, RxPacketsPerSecond: 406_000, RxBytesPerPacket: 66,
			TxBitsPerSecond: 9.84e9, TxGoodputBitsPerSecond: 9.61e9, RxBitsPerSecond: 0.214e9, OtherPct: 3.1,
		}},
		Remote: result.SideInfo{Wire: &result.Wire{
			Wire:               netdev.Wire{Device: "lo", Loopback: true, ElapsedS: 2},
			TxPacketsPerSecond: 1234, TxBytesPerPacket: 65483, OtherPct: 42, TxBitsPerSecond: 1e9, TxGoodputBitsPerSecond: 0.5e9, RxGoodputBitsPerSecond: 0.25e9,
		}},
	}
	var b strings.Builder
	Wire(&b, res)
	want := `local  wire: wst-b tx 812k pkts/s, 1514 B/pkt; rx 406k pkts/s, 66 B/pkt; 3.1% not this test
             tx 9.84 Gbits/sec on the device (headers included) for 9.61 Gbits/sec of payload; rx 214 Mbits/sec for 0 bits/sec; dropped tx 0 rx 2, errors tx 0 rx 0, rx_missed 0, rx_over 0
             qdisc tbf: sent 123456 bytes in 80 packets, 4 dropped, 9 overlimits, 0 requeues; backlog 0 Bytes at the end, 30.0 KBytes at most
             driver: rx_csum_complete 7, tx_tso_packets 12
remote wire: lo (loopback: one device carries both directions, counted once) 1.23k pkts/s, 65483 B/pkt; 42% not this test
             1.00 Gbits/sec on the device (headers included) for 750 Mbits/sec of payload both ways
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("wire lines (-want +got):\n%s", d)
	}
	for v, want := range map[float64]string{812_000: "812k", 1_234_567: "1.23M", 950: "950", 12_345: "12.3k", 0.4: "0.4", 0: "0"} {
		if got := FormatCount(v); got != want {
			t.Errorf("FormatCount(%v) = %q, want %q", v, got, want)
		}
	}
}
