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
			TxPacketsPerSecond: 1850, TxBytesPerPacket: 64592, RxPacketsPerSecond: 406_000, RxBytesPerPacket: 66,
			TxFramesPerSecond: 82_700, TxBytesPerFrame: 1514, TxFramesFrom: "qdisc", RxFramesPerSecond: 406_000, RxBytesPerFrame: 66,
			SegmentBytes: 1448, HeaderBytes: 66, GoodputLeft: true,
			TxBitsPerSecond: 9.84e9, TxGoodputBitsPerSecond: 9.61e9, RxBitsPerSecond: 0.214e9, OtherPct: 3.1,
		}},
		Remote: result.SideInfo{Wire: &result.Wire{
			Wire:               netdev.Wire{Device: "lo", Loopback: true, ElapsedS: 2},
			TxPacketsPerSecond: 1234, TxBytesPerPacket: 65483, OtherPct: 42, TxBitsPerSecond: 1e9, TxGoodputBitsPerSecond: 0.5e9, RxGoodputBitsPerSecond: 0.25e9,
		}},
	}
	var b strings.Builder
	Wire(&b, res)
	want := `local  wire: wst-b device: tx 1.85k pkts/s, 64592 B/pkt; rx 406k pkts/s, 66 B/pkt (as the device counts: a TSO, GSO or GRO packet once); 3.1% not this test
             on the wire: tx 82.7k frames/s, 1514 B/frame (the tbf qdisc's count; 44.7 a device packet); rx about 406k frames/s, 66 B/frame (estimated from 1448 B segments and 66 B of headers)
             tx 9.84 Gbits/sec on the device (headers included) for 9.61 Gbits/sec of payload the peer acknowledged; rx 214 Mbits/sec for 0 bits/sec the kernel received; dropped tx 0 rx 2, errors tx 0 rx 0, rx_missed 0, rx_over 0
             qdisc tbf: sent 123456 bytes in 80 packets, 4 dropped, 9 overlimits, 0 requeues; backlog 0 Bytes at the end, 30.0 KBytes at most
             driver: rx_csum_complete 7, tx_tso_packets 12
remote wire: lo (loopback: one device carries both directions, counted once) 1.23k pkts/s, 65483 B/pkt; 42% not this test
             1.00 Gbits/sec on the device (headers included) for 750 Mbits/sec of payload both ways
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("wire lines (-want +got):\n%s", d)
	}
	// Without a qdisc that counts, tx's frames are an estimate too;
	// without the kernel's counts, the payload is what the program
	// wrote and read.
	est := result.Wire{Wire: netdev.Wire{Device: "eth0", ElapsedS: 1, Qdisc: &netdev.QdiscWire{Kind: "noqueue"}},
		TxPacketsPerSecond: 1000, TxBytesPerPacket: 14546, TxFramesPerSecond: 10_000, TxBytesPerFrame: 1514, TxFramesFrom: "estimate",
		RxPacketsPerSecond: 500, RxBytesPerPacket: 66, RxFramesPerSecond: 500, RxBytesPerFrame: 66, SegmentBytes: 1448, HeaderBytes: 66,
		TxBitsPerSecond: 116e6, TxGoodputBitsPerSecond: 115e6}
	wantEst := []string{
		"eth0 device: tx 1.00k pkts/s, 14546 B/pkt; rx 500 pkts/s, 66 B/pkt (as the device counts: a TSO, GSO or GRO packet once); 0.0% not this test",
		"on the wire: tx about 10.0k frames/s, 1514 B/frame (estimated from 1448 B segments and 66 B of headers; 10.0 a device packet); rx about 500 frames/s, 66 B/frame (estimated likewise)",
		"tx 116 Mbits/sec on the device (headers included) for 115 Mbits/sec of payload; rx 0 bits/sec for 0 bits/sec",
	}
	if d := cmp.Diff(wantEst, wireLines(est)); d != "" {
		t.Errorf("estimated frames' lines (-want +got):\n%s", d)
	}
	for v, want := range map[float64]string{812_000: "812k", 1_234_567: "1.23M", 950: "950", 12_345: "12.3k", 0.4: "0.4", 0: "0"} {
		if got := FormatCount(v); got != want {
			t.Errorf("FormatCount(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestWireCSVFrames: a run's CSV carries the frames beside the device's
// packets, each in the column its header names: the sender's and each
// side's, and where the tx count came from; empty where a side has none
// (loopback).
func TestWireCSVFrames(t *testing.T) {
	r := result.Result{
		Summary: result.Summary{SenderWirePacketsPerSecond: 1850, SenderWireBytesPerPacket: 64592, SenderWireFramesPerSecond: 82_700, SenderWireBytesPerFrame: 1514},
		Local: result.SideInfo{Wire: &result.Wire{Wire: netdev.Wire{Device: "wst-b"},
			TxPacketsPerSecond: 1850, TxFramesPerSecond: 82_700, TxBytesPerFrame: 1514, TxFramesFrom: "qdisc", RxFramesPerSecond: 1200, RxBytesPerFrame: 66}},
		Remote: result.SideInfo{Wire: &result.Wire{Wire: netdev.Wire{Device: "wst-a"},
			TxPacketsPerSecond: 1200, TxFramesPerSecond: 1200, TxBytesPerFrame: 66, TxFramesFrom: "estimate", RxFramesPerSecond: 82_000, RxBytesPerFrame: 1514}},
	}
	cells := wireCSV(r, true)
	if len(cells) != len(wireCSVHeader) {
		t.Fatalf("%d cells for %d columns", len(cells), len(wireCSVHeader))
	}
	got := map[string]string{}
	for i, h := range wireCSVHeader {
		got[h] = cells[i]
	}
	for col, want := range map[string]string{
		"sender_wire_pps": "1850", "sender_wire_bytes_per_packet": "64592",
		"sender_wire_frames_per_s": "82700", "sender_wire_bytes_per_frame": "1514",
		"local_wire_tx_frames_per_s": "82700", "local_wire_tx_bytes_per_frame": "1514", "local_wire_tx_frames_from": "qdisc",
		"local_wire_rx_frames_per_s": "1200", "local_wire_rx_bytes_per_frame": "66",
		"remote_wire_tx_frames_per_s": "1200", "remote_wire_tx_bytes_per_frame": "66", "remote_wire_tx_frames_from": "estimate",
		"remote_wire_rx_frames_per_s": "82000", "remote_wire_rx_bytes_per_frame": "1514",
	} {
		if got[col] != want {
			t.Errorf("column %s = %q, want %q", col, got[col], want)
		}
	}
	r.Remote.Wire = &result.Wire{Wire: netdev.Wire{Device: "lo", Loopback: true}, TxPacketsPerSecond: 9}
	for i, c := range wireCSV(r, true) {
		if h := wireCSVHeader[i]; strings.HasPrefix(h, "remote_wire_") && strings.Contains(h, "frame") && c != "" {
			t.Errorf("loopback: column %s = %q, want empty", h, c)
		}
	}
}
