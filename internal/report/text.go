package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// dirLabel is how a direction reads in text.
func dirLabel(d spec.Direction) string {
	switch d {
	case spec.ClientToServer:
		return "client->server"
	case spec.ServerToClient:
		return "server->client"
	case spec.RequestResponse:
		return "request/resp"
	}
	return string(d)
}

// Heading describes a run before it starts, as one line.
func Heading(w io.Writer, t spec.Test, server string) {
	cc := t.CongestionControl
	if cc == "" {
		cc = "system default"
	}
	streams := "1 stream"
	if n := len(t.Streams()); n > 1 {
		streams = fmt.Sprintf("%d streams", n)
	}
	length := t.Duration.String()
	switch {
	case t.AmountBlocks > 0:
		length = fmt.Sprintf("%d blocks of %d bytes (%s) per direction within %v", t.AmountBlocks, t.SendSize, units.FormatBytes(float64(t.Amount())), t.Duration)
	case t.AmountBytes > 0:
		length = fmt.Sprintf("%d bytes (%s) per direction within %v", t.AmountBytes, units.FormatBytes(float64(t.AmountBytes)), t.Duration)
	}
	fmt.Fprintf(w, "wirespeed %s to %s: %s, %s", t.Kind, server, streams, length)
	if t.Omit > 0 {
		fmt.Fprintf(w, " after %v warm-up", t.Omit)
	}
	switch {
	case t.Kind == spec.UDPStream:
		rate := "as fast as possible"
		if t.RateBitsPerSecond > 0 {
			rate = units.FormatBits(t.RateBitsPerSecond) + " per stream"
		}
		size := t.SendSize
		if t.GSOSize > 0 {
			size = t.GSOSize // the send is cut into datagrams of this size
		}
		fmt.Fprintf(w, ", %d-byte datagrams %s, %s\n", size, dirLabel(t.Directions()[0]), rate)
	case t.Kind.RR():
		fmt.Fprintf(w, ", request %d bytes, response %d bytes, burst %d\n", t.RequestSize, t.ResponseSize, t.Burst)
	default:
		fmt.Fprintf(w, ", congestion control %s, payload %s", cc, t.Payload.Kind)
		if t.RateBitsPerSecond > 0 {
			fmt.Fprintf(w, ", paced to %s per stream", units.FormatBits(t.RateBitsPerSecond))
		}
		fmt.Fprintln(w)
	}
	dataPathHeading(w, t)
	sockOptsHeading(w, t) // -B, --cport, --tos, --mss, ...
}

// Record writes the title and labels the user recorded with a run, a
// line each, before its heading; nothing when there are none.
func Record(w io.Writer, title string, labels map[string]string) {
	if title != "" {
		fmt.Fprintf(w, "title: %s\n", title)
	}
	if len(labels) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			parts = append(parts, k+"="+labels[k])
		}
		fmt.Fprintf(w, "labels: %s\n", strings.Join(parts, ", "))
	}
}

// IntervalHeader is the line above the interval lines of a test of kind
// k, naming each column of intervalLine's: iperf3's Jitter and
// Lost/Total Datagrams for UDP_STREAM, the transactions and their rate
// (trans/s) for request/response tests, the retransmissions and
// congestion window of TCP.
func IntervalHeader(w io.Writer, k spec.Kind) {
	switch {
	case k.RR():
		fmt.Fprintf(w, "[ ID] %-15s %-17s  %12s        %12s\n", "Direction", "Interval", "Transactions", "trans/s")
	case k == spec.UDPStream:
		fmt.Fprintf(w, "[ ID] %-15s %-17s %14s  %15s  %8s  %s\n", "Direction", "Interval", "Transfer", "Bitrate", "Jitter", "Lost/Total Datagrams")
	default:
		fmt.Fprintf(w, "[ ID] %-15s %-17s %14s  %15s  %s\n", "Direction", "Interval", "Transfer", "Bitrate", "Retr  Cwnd")
	}
}

// Tick writes the interval lines of one tick: one per stream, and a [SUM]
// line when the direction has several streams.
func Tick(w io.Writer, tk result.Tick) { TickIn(w, tk, 0) }

// TickIn is Tick with the bitrate in unit u (-f; 0: adaptive bits).
func TickIn(w io.Writer, tk result.Tick, u units.RateUnit) {
	if len(tk.Streams) > 1 {
		for _, s := range tk.Streams {
			intervalLine(w, fmt.Sprintf("%3d", s.ID), tk.Direction, s.Interval, true, u)
		}
		intervalLine(w, "SUM", tk.Direction, tk.Interval, false, u)
		return
	}
	id := "  1"
	if len(tk.Streams) == 1 {
		id = fmt.Sprintf("%3d", tk.Streams[0].ID)
	}
	intervalLine(w, id, tk.Direction, tk.Interval, true, u)
}

// intervalLine writes one iperf-style line; cwnd is shown for a stream,
// not for a sum of several. UDP lines show the jitter and lost/total
// datagrams as iperf's do; request/response lines the transaction rate.
func intervalLine(w io.Writer, id string, d spec.Direction, iv result.Interval, cwnd bool, u units.RateUnit) {
	if d == spec.RequestResponse {
		fmt.Fprintf(w, "[%s] %-15s %6.2f-%-6.2f sec  %12d trans  %12.0f trans/s\n",
			id, dirLabel(d), iv.StartS, iv.EndS, iv.Packets, iv.TransactionsPerSecond)
		return
	}
	fmt.Fprintf(w, "[%s] %-15s %6.2f-%-6.2f sec  %12s  %15s",
		id, dirLabel(d), iv.StartS, iv.EndS, units.FormatBytes(float64(iv.Bytes)), u.Format(iv.BitsPerSecond))
	if iv.Packets > 0 || iv.JitterMs > 0 {
		fmt.Fprintf(w, "  %5.3f ms  %d/%d (%.2g%%)\n", iv.JitterMs, iv.Lost, iv.Packets+iv.Lost, 100*result.Ratio(float64(iv.Lost), float64(iv.Packets+iv.Lost)))
		return
	}
	fmt.Fprintf(w, "  %4d", iv.Retransmits)
	if cwnd && iv.CwndBytes > 0 {
		fmt.Fprintf(w, "  %s", units.FormatBytes(float64(iv.CwndBytes)))
	}
	fmt.Fprintln(w)
}

// Text writes the result of one run: the netperf table, then per direction
// and side what each measured, then any warnings.
func Text(w io.Writer, res result.Result) { TextIn(w, res, 0) }

// TextIn is Text with throughputs in unit u (-f; 0: 10^6bits/sec).
func TextIn(w io.Writer, res result.Result, u units.RateUnit) {
	if res.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the run was stopped early; the figures cover only what was measured before.")
	}
	UnderLoad(w, res) // RRUL's answer leads (underload.go)
	switch {
	case res.Spec.Kind == spec.UDPStream:
		udpTable(w, res, u)
	case res.Spec.Kind.RR():
		RRTable(w, res)
	default:
		table(w, res, u)
		fmt.Fprintln(w)
		sides(w, res, u)
	}
	measurement(w, res)
	if res.Local.Wire != nil || res.Remote.Wire != nil {
		fmt.Fprintln(w)
		Wire(w, res)
	}
	if res.Summary.Limit != nil {
		fmt.Fprintln(w)
		LimitedBy(w, res)
	}
	if res.Local.Env != nil || res.Remote.Env != nil {
		fmt.Fprintln(w)
		EnvSummary(w, res)
	}
	DataPath(w, res)
	Warnings(w, res.Warnings)
}

func udpTable(w io.Writer, res result.Result, unit units.RateUnit) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Socket\tMessage\tElapsed\tMessages\t\t\t\t\t")
	fmt.Fprintln(tw, "Size\tSize\tTime\tOkay\tErrors\tThroughput\t\t\t")
	fmt.Fprintln(tw, "bytes\tbytes\tsecs\t#\t#\t"+unit.Column()+"\t\t\t")
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t")
	for _, d := range res.Directions {
		u := d.Summary.UDPSummary
		if u == nil {
			u = &result.UDPSummary{}
		}
		sndBuf, rcvBuf := 0, 0
		if len(d.Streams) > 0 {
			sndBuf, rcvBuf = d.Streams[0].Sender.SndBuf, d.Streams[0].Receiver.RcvBuf
		}
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t%d\t%d\t%.2f\t\t%s sends\t\n", sndBuf, res.Spec.SendSize, d.Summary.SenderElapsedS,
			u.PacketsSent, u.SendErrors, unit.Scale(d.Summary.SenderBitsPerSecond), d.Sender)
		fmt.Fprintf(tw, "%d\t\t%.2f\t%d\t\t%.2f\t\t%s receives\t\n", rcvBuf, d.Summary.ElapsedS,
			u.PacketsReceived, unit.Scale(d.Summary.BitsPerSecond), d.Receiver)
	}
	tw.Flush()
	for _, d := range res.Directions {
		u := d.Summary.UDPSummary
		if u == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s datagrams: %d sent, %d received, %d lost (%.3g%%), %d out of order, %d duplicate; jitter %.3f ms; %d send errors\n",
			dirLabel(d.Direction), u.PacketsSent, u.PacketsReceived, u.Lost, u.LossPct, u.OutOfOrder, u.Duplicates, u.JitterMs, u.SendErrors)
		snd, rcv := res.Local.Counters, res.Remote.Counters
		if d.Sender == result.Remote {
			snd, rcv = rcv, snd
		}
		if rcv != nil {
			fmt.Fprintf(w, "  receiver's kernel (%s): Udp RcvbufErrors %d, InErrors %d over the window (dropped at its socket buffer, not on the wire)\n",
				d.Receiver, rcv.UDP.RcvbufErrors, rcv.UDP.InErrors)
		}
		if snd != nil {
			fmt.Fprintf(w, "  sender's kernel (%s): Udp SndbufErrors %d over the window: %d refused by the kernel (EAGAIN, ENOBUFS) and retried, %d taken and then dropped at a full queue of the sender's host (or other sockets' refusals)\n",
				d.Sender, snd.UDP.SndbufErrors, min(u.SendErrors, snd.UDP.SndbufErrors), max(snd.UDP.SndbufErrors-u.SendErrors, 0))
		}
		fragments(w, d, snd, rcv)
	}
}

// fragments writes the IPv4 fragmentation counters of a UDP_STREAM
// direction's two hosts when either shows a datagram cut or a reassembly
// given up: then the table's counts are of datagrams, not of what crossed
// the link (the warning says so too).
func fragments(w io.Writer, d result.DirectionResult, snd, rcv *measure.Counters) {
	var sip, rip measure.IPCounters
	if snd != nil {
		sip = snd.IP
	}
	if rcv != nil {
		rip = rcv.IP
	}
	if !sip.Fragmented() && !rip.Fragmented() {
		return
	}
	if snd != nil {
		fmt.Fprintf(w, "  sender's kernel (%s): Ip FragCreates %d, FragFails %d, FragOKs %d over the window (datagrams larger than the path MTU, sent in fragments)\n",
			d.Sender, sip.FragCreates, sip.FragFails, sip.FragOKs)
	}
	if rcv != nil {
		fmt.Fprintf(w, "  receiver's kernel (%s): Ip ReasmOKs %d, ReasmFails %d, ReasmTimeout %d over the window (a datagram missing one fragment is lost whole)\n",
			d.Receiver, rip.ReasmOKs, rip.ReasmFails, rip.ReasmTimeout)
	}
}

// RRTable writes netperf's request/response table, then the latency of
// the transactions.
func RRTable(w io.Writer, res result.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cpu := hasCPU(res.Summary)
	head := [][]string{
		{"Socket Size", "", "Request", "Resp.", "Elapsed", "Trans."},
		{"Send", "Recv", "Size", "Size", "Time", "Rate"},
		{"bytes", "bytes", "bytes", "bytes", "secs.", "per sec"},
	}
	if cpu {
		head[0] = append(head[0], "CPU", "CPU", "S.dem", "S.dem")
		head[1] = append(head[1], "local", "remote", "local", "remote")
		head[2] = append(head[2], "%", "%", "us/Tr", "us/Tr")
	}
	for _, h := range head {
		fmt.Fprintln(tw, strings.Join(h, "\t")+"\t\t")
	}
	fmt.Fprintln(tw, strings.Repeat("\t", len(head[0])+1))
	note := ""
	for _, d := range res.Directions {
		rr := d.Summary.RRSummary
		if rr == nil {
			rr = &result.RRSummary{}
		}
		sndBuf, rcvBuf, source := socketSizes(res, d)
		size := func(n int) string {
			switch {
			case n <= 0:
				return "-"
			case source != "granted":
				return fmt.Sprintf("%d*", n)
			}
			return strconv.Itoa(n)
		}
		if source != "granted" && source != "" {
			note = source
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.2f\t%.2f\t", size(sndBuf), size(rcvBuf), res.Spec.RequestSize, res.Spec.ResponseSize,
			d.Summary.ElapsedS, rr.TransactionsPerSecond)
		if cpu {
			fmt.Fprint(tw, cpuCells(res.Summary)+"\t")
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()
	switch note {
	case "default":
		fmt.Fprintf(w, "* %s opens a socket per transaction: the sizes every new socket starts with (tcp_wmem and tcp_rmem defaults), which the kernel grows as needed\n", res.Spec.Kind)
	case "asked":
		fmt.Fprintf(w, "* %s opens a socket per transaction: the size -s asked for on each\n", res.Spec.Kind)
	}
	for _, d := range res.Directions {
		rr := d.Summary.RRSummary
		if rr == nil {
			continue
		}
		l := rr.Latency
		fmt.Fprintf(w, "\nlatency us: min %.2f  mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  stddev %.2f  (%d transactions)\n",
			l.Min, l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max, l.StdDev, l.Count)
		fmt.Fprintf(w, "transactions over the whole run: client %d, server %d", rr.ClientTransactions, rr.ServerTransactions)
		if rr.Timeouts > 0 {
			fmt.Fprintf(w, "; %d timed out", rr.Timeouts)
		}
		fmt.Fprintln(w)
	}
}

// Table writes netperf's TCP_STREAM table: one row per direction, with the
// socket sizes the kernel granted, and a total row for two directions.
func Table(w io.Writer, res result.Result) { table(w, res, 0) }

func table(w io.Writer, res result.Result, u units.RateUnit) {
	if hasCPU(res.Summary) {
		cpuTable(w, res, u)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Recv\tSend\tSend\t\t\t\t")
	fmt.Fprintln(tw, "Socket\tSocket\tMessage\tElapsed\t\t\t")
	fmt.Fprintln(tw, "Size\tSize\tSize\tTime\tThroughput\t\t")
	fmt.Fprintln(tw, "bytes\tbytes\tbytes\tsecs.\t"+u.Column()+"\t\t")
	fmt.Fprintln(tw, "\t\t\t\t\t\t")
	for _, d := range res.Directions {
		rcvBuf, sndBuf := 0, 0
		if len(d.Streams) > 0 {
			rcvBuf, sndBuf = d.Streams[0].Receiver.RcvBuf, d.Streams[0].Sender.SndBuf
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.2f\t%.2f\t\t%s\n", rcvBuf, sndBuf, res.Spec.SendSize,
			d.Summary.ElapsedS, u.Scale(d.Summary.BitsPerSecond), dirLabel(d.Direction))
	}
	if len(res.Directions) > 1 {
		fmt.Fprintf(tw, "\t\t\t%.2f\t%.2f\t\t%s\n", res.Summary.ElapsedS, u.Scale(res.Summary.BitsPerSecond), "both directions")
	}
	tw.Flush()
}

func sides(w io.Writer, res result.Result, u units.RateUnit) {
	for i, d := range res.Directions {
		if i > 0 {
			fmt.Fprintln(w)
		}
		n := len(d.Streams)
		fmt.Fprintf(w, "%s: %s sends, %s receives, %d stream%s\n", dirLabel(d.Direction), d.Sender, d.Receiver, n, plural(n))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "stream\tside\trole\tbytes\tsecs.\t"+strings.TrimSuffix(u.Column(), "ec")+"\tretrans\tmss\tcwnd\trtt us\tcc\t")
		for _, s := range d.Streams {
			id := fmt.Sprint(s.ID)
			sideRow(tw, u, id, s.Sender, s.Sender.Bytes, s.Summary.SenderElapsedS, s.Summary.SenderBitsPerSecond)
			sideRow(tw, u, id, s.Receiver, s.Receiver.Bytes, s.Summary.ElapsedS, s.Summary.BitsPerSecond)
		}
		if n > 1 {
			all := func(side result.Side, role result.Role) result.StreamSide {
				return result.StreamSide{Side: side, Role: role, Retransmits: d.Summary.Retransmits}
			}
			sideRow(tw, u, "all", all(d.Sender, result.Sender), d.Summary.SenderBytes, d.Summary.SenderElapsedS, d.Summary.SenderBitsPerSecond)
			sideRow(tw, u, "all", all(d.Receiver, result.Receiver), d.Summary.Bytes, d.Summary.ElapsedS, d.Summary.BitsPerSecond)
		}
		tw.Flush()
	}
}

func sideRow(w io.Writer, u units.RateUnit, id string, s result.StreamSide, bytes int64, elapsed, bps float64) {
	retr, mss, cwnd, rtt := "-", "-", "-", "-"
	if s.Role == result.Sender {
		retr = fmt.Sprint(s.Retransmits)
	}
	if ti := s.TCPInfo; ti != nil {
		if s.Role == result.Sender {
			mss = fmt.Sprint(ti.SndMSS)
			cwnd = units.FormatBytes(float64(ti.CwndBytes))
			rtt = fmt.Sprintf("%.0f", ti.RTTMicros)
		} else {
			mss = fmt.Sprint(ti.RcvMSS)
		}
	}
	cc := s.CongestionControl
	if cc == "" {
		cc = "-"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n",
		id, s.Side, s.Role, bytes, elapsed, u.Scale(bps), retr, mss, cwnd, rtt, cc)
}

// Warnings lists caveats, one per line.
func Warnings(w io.Writer, ws []string) {
	for _, s := range ws {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// Tradeoff writes two runs of opposite directions side by side, with the
// ratio of the second's throughput to the first's.
func Tradeoff(w io.Writer, a, b result.Result, t result.Tradeoff) { TradeoffIn(w, a, b, t, 0) }

// TradeoffIn is Tradeoff with throughputs in unit u (-f).
func TradeoffIn(w io.Writer, a, b result.Result, t result.Tradeoff, u units.RateUnit) {
	fmt.Fprintln(w, "Tradeoff: one direction, then the other, over the same path")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "test\tdirection\tsecs.\t"+u.Column()+"\tsender "+u.Column()+"\tretrans\t")
	for _, r := range []result.Result{a, b} {
		dir := "-"
		if len(r.Directions) > 0 {
			dir = dirLabel(r.Directions[0].Direction)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%d\t\n", r.Spec.Kind, dir, r.Summary.ElapsedS,
			u.Scale(r.Summary.BitsPerSecond), u.Scale(r.Summary.SenderBitsPerSecond), r.Summary.Retransmits)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s / %s = %.3f%s\n", b.Spec.Kind, a.Spec.Kind, t.Ratio, tradeoffTest(t))
	if tt := t.Test; tt != nil {
		Warnings(w, tt.Warnings)
	}
	for _, r := range []result.Result{a, b} {
		if l := r.Summary.Limit; l != nil {
			fmt.Fprintf(w, "%s limited by: %s\n", r.Spec.Kind, LimitText(l))
		}
	}
	for _, r := range []result.Result{a, b} {
		if r.Interrupted {
			fmt.Fprintf(w, "INTERRUPTED: %s was stopped early.\n", r.Spec.Kind)
		}
		Warnings(w, r.Warnings)
	}
}

// tradeoffTest is what follows a tradeoff's ratio: the test of the two
// directions' iterations, as compare states a difference.
func tradeoffTest(t result.Tradeoff) string {
	tt := t.Test
	switch {
	case tt != nil && tt.Significant:
		return fmt.Sprintf("  (p=%.3f, n=%d+%d, %s: significant at alpha %g)", tt.P, tt.NA, tt.NB, tt.Test, tt.Alpha)
	case tt != nil:
		return fmt.Sprintf("  (p=%.3f, n=%d+%d, %s: not significant at alpha %g)", tt.P, tt.NA, tt.NB, tt.Test, tt.Alpha)
	case t.TestError != "":
		return "  (not tested: " + t.TestError + ")"
	}
	return "  (single runs: no significance test; use -I to repeat each direction)"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
