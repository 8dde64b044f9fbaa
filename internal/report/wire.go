package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"wirespeed/internal/record"

	"wirespeed/internal/result"
	"wirespeed/internal/units"
)

// Wire writes a `wire:` line per side (what its device counted:
// packets per second and mean bytes per packet each way, the share that
// was not this test's), then the frames a physical wire carries, the
// device's rate against the payload, its root qdisc's figures and the
// driver's offload counters, indented under it.
func Wire(w io.Writer, res result.Result) {
	for _, s := range []struct {
		name string
		w    *result.Wire
	}{{"local ", res.Local.Wire}, {"remote", res.Remote.Wire}} {
		if s.w == nil {
			continue
		}
		for i, l := range wireLines(*s.w) {
			if i == 0 {
				fmt.Fprintf(w, "%s wire: %s\n", s.name, l)
			} else {
				fmt.Fprintf(w, "             %s\n", l)
			}
		}
	}
}

// wireLines are the lines of one side's wire figures.
func wireLines(wr result.Wire) []string {
	l := wr.Link
	var first string
	if wr.Loopback {
		// Every packet out of lo comes back into it: one count.
		first = fmt.Sprintf("%s (loopback: one device carries both directions, counted once) %s pkts/s, %s B/pkt; %s not this test",
			wr.Device, FormatCount(wr.TxPacketsPerSecond), formatPerPacket(wr.TxBytesPerPacket), formatPct(wr.OtherPct))
	} else {
		first = fmt.Sprintf("%s device: tx %s pkts/s, %s B/pkt; rx %s pkts/s, %s B/pkt (as the device counts: a TSO, GSO or GRO packet once); %s not this test",
			wr.Device, FormatCount(wr.TxPacketsPerSecond), formatPerPacket(wr.TxBytesPerPacket),
			FormatCount(wr.RxPacketsPerSecond), formatPerPacket(wr.RxBytesPerPacket), formatPct(wr.OtherPct))
	}
	lines := []string{first}
	if f := framesLine(wr); f != "" {
		lines = append(lines, f)
	}
	rate := fmt.Sprintf("tx %s on the device (headers included) for %s of payload", units.FormatBits(wr.TxBitsPerSecond), units.FormatBits(wr.TxGoodputBitsPerSecond))
	switch {
	case wr.Loopback:
		rate = fmt.Sprintf("%s on the device (headers included) for %s of payload both ways", units.FormatBits(wr.TxBitsPerSecond), units.FormatBits(wr.TxGoodputBitsPerSecond+wr.RxGoodputBitsPerSecond))
	case wr.GoodputLeft:
		rate = fmt.Sprintf("tx %s on the device (headers included) for %s of payload the peer acknowledged; rx %s for %s the kernel received",
			units.FormatBits(wr.TxBitsPerSecond), units.FormatBits(wr.TxGoodputBitsPerSecond), units.FormatBits(wr.RxBitsPerSecond), units.FormatBits(wr.RxGoodputBitsPerSecond))
	default:
		rate += fmt.Sprintf("; rx %s for %s", units.FormatBits(wr.RxBitsPerSecond), units.FormatBits(wr.RxGoodputBitsPerSecond))
	}
	if d := l.TxDropped + l.RxDropped + l.TxErrors + l.RxErrors + l.RxMissed + l.RxOverErrs; d > 0 {
		rate += fmt.Sprintf("; dropped tx %d rx %d, errors tx %d rx %d, rx_missed %d, rx_over %d", l.TxDropped, l.RxDropped, l.TxErrors, l.RxErrors, l.RxMissed, l.RxOverErrs)
	}
	lines = append(lines, rate)
	if q := wr.Qdisc; q != nil && (q.SentPackets > 0 || q.Drops > 0 || q.MaxBacklogBytes > 0) {
		lines = append(lines, fmt.Sprintf("qdisc %s: sent %d bytes in %d packets, %d dropped, %d overlimits, %d requeues; backlog %s at the end, %s at most",
			q.Kind, q.SentBytes, q.SentPackets, q.Drops, q.Overlimits, q.Requeues, units.FormatBytes(float64(q.BacklogBytes)), units.FormatBytes(float64(q.MaxBacklogBytes))))
	}
	if names := wr.EthtoolNames(); len(names) > 0 {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s %d", n, wr.Ethtool[n])
		}
		lines = append(lines, "driver: "+strings.Join(parts, ", "))
	}
	return lines
}

// framesLine is a side's frames on the wire, each way, and where each
// count comes from: the root qdisc's, which counts a GSO packet as its
// segments, or an estimate from the bytes over the MSS (or datagram)
// plus headers; with how many frames a device packet became where that
// is more than one. Empty on loopback and where there are none.
func framesLine(wr result.Wire) string {
	if wr.Loopback || wr.TxFramesPerSecond <= 0 && wr.RxFramesPerSecond <= 0 {
		return ""
	}
	est := "estimated"
	if wr.SegmentBytes > 0 {
		est = fmt.Sprintf("estimated from %d B segments and %d B of headers", wr.SegmentBytes, wr.HeaderBytes)
	}
	txEst := wr.TxFramesFrom != "qdisc" || wr.Qdisc == nil
	way := func(dir string, fps, bpf, pps float64, from string) string {
		about, src := "about ", est
		switch {
		case from == "qdisc" && wr.Qdisc != nil:
			about, src = "", "the "+wr.Qdisc.Kind+" qdisc's count"
		case dir == "rx" && txEst:
			src = "estimated likewise"
		}
		if pps > 0 && fps >= 1.05*pps {
			src += fmt.Sprintf("; %.1f a device packet", fps/pps)
		}
		return fmt.Sprintf("%s %s%s frames/s, %s B/frame (%s)", dir, about, FormatCount(fps), formatPerPacket(bpf), src)
	}
	return "on the wire: " + way("tx", wr.TxFramesPerSecond, wr.TxBytesPerFrame, wr.TxPacketsPerSecond, wr.TxFramesFrom) +
		"; " + way("rx", wr.RxFramesPerSecond, wr.RxBytesPerFrame, wr.RxPacketsPerSecond, "estimate")
}

// FormatCount writes a rate of things per second in three digits with
// k, M or G: "812k", "1.23M", "950", "0.4".
func FormatCount(v float64) string {
	switch {
	case v >= 1e9:
		return sig3(v/1e9) + "G"
	case v >= 1e6:
		return sig3(v/1e6) + "M"
	case v >= 1e3:
		return sig3(v/1e3) + "k"
	case v > 0 && v < 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func sig3(v float64) string {
	switch {
	case v < 9.995:
		return fmt.Sprintf("%.2f", v)
	case v < 99.95:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func formatPerPacket(b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", b)
}

func formatPct(p float64) string {
	if p < 10 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// wireHeader heads the sweep's and matrix's two columns of the sender's
// device: its packets per second and mean bytes per packet (tx).
var wireHeader = [4][2]string{
	{"Sender", "Sender"},
	{"Device", "Device"},
	{"Packets", "Bytes"},
	{"per sec", "per pkt"},
}

// wireCells are a row's cells of the sender's device: packets per second
// and mean bytes per packet, "-" where the device was not read.
func wireCells(s result.Summary) []string {
	if s.SenderWirePacketsPerSecond <= 0 {
		return []string{"-", "-"}
	}
	return []string{FormatCount(s.SenderWirePacketsPerSecond), fmt.Sprintf("%.0f", s.SenderWireBytesPerPacket)}
}

// wireCSVHeader names the CSV's columns of the devices (after the
// others): the sender's device's packets per second and bytes per packet
// (the tables' columns), then each side's figures (result.Wire).
// The frames' columns follow, the sender's and each side's, where
// they were added (after every other column, so that a reader of the
// columns before finds them where they were).
var wireCSVHeader = concat([]string{record.SenderWirePPS.Name, record.SenderWireBytesPerPacket.Name},
	wireSideHeader("local"), wireSideHeader("remote"),
	[]string{record.SenderWireFramesPerSecond.Name, record.SenderWireBytesPerFrame.Name},
	wireFramesHeader("local"), wireFramesHeader("remote"))

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// wireFrameColumns are a side's frame columns (result.Wire's).
var wireFrameColumns = []string{"tx_frames_per_s", "tx_bytes_per_frame", "rx_frames_per_s", "rx_bytes_per_frame", "tx_frames_from"}

func wireFramesHeader(side string) []string {
	var h []string
	for _, c := range wireFrameColumns {
		h = append(h, side+"_wire_"+c)
	}
	return h
}

func wireSideHeader(side string) []string {
	var h []string
	for _, c := range []string{"device", "tx_pps", "rx_pps", "tx_bytes_per_packet", "rx_bytes_per_packet",
		"tx_bps", "rx_bps", "other_pct", "rx_drops", "qdisc_drops"} {
		h = append(h, side+"_wire_"+c)
	}
	return h
}

// senderWire is a cell of the sender's device's figures, empty where it
// was not read.
func senderWire(v float64) string {
	if v <= 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// wireCSV is a row's device cells: like the CPU, on a run's one
// direction's row or its "both" row (show), empty elsewhere and where a
// side's device was not read.
func wireCSV(r result.Result, show bool) []string {
	cells := make([]string, len(wireCSVHeader))
	if !show {
		return cells
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	cells[0], cells[1] = senderWire(r.Summary.SenderWirePacketsPerSecond), senderWire(r.Summary.SenderWireBytesPerPacket)
	for i, w := range []*result.Wire{r.Local.Wire, r.Remote.Wire} {
		if w == nil {
			continue
		}
		l := w.Link
		qd := ""
		if w.Qdisc != nil {
			qd = u(w.Qdisc.Drops)
		}
		copy(cells[2+10*i:], []string{w.Device, f(w.TxPacketsPerSecond), f(w.RxPacketsPerSecond), f(w.TxBytesPerPacket), f(w.RxBytesPerPacket),
			f(w.TxBitsPerSecond), f(w.RxBitsPerSecond), f(w.OtherPct), u(l.RxDropped + l.RxMissed + l.RxOverErrs), qd})
		if w.TxFramesPerSecond > 0 || w.RxFramesPerSecond > 0 {
			copy(cells[24+len(wireFrameColumns)*i:], []string{f(w.TxFramesPerSecond), f(w.TxBytesPerFrame), f(w.RxFramesPerSecond), f(w.RxBytesPerFrame), w.TxFramesFrom})
		}
	}
	cells[22], cells[23] = senderWire(r.Summary.SenderWireFramesPerSecond), senderWire(r.Summary.SenderWireBytesPerFrame)
	return cells
}
