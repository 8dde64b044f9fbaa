package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

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

// Heading describes a run before it starts: the test, the server, the
// streams and the length, then what differs from the defaults (the
// congestion control and payload asked for, the datagrams and their rate,
// the request and response sizes), on one line where it fits in Width
// and continued under it where it does not. The lines under it name the
// data path and socket options asked for.
func Heading(w io.Writer, t spec.Test, server string) {
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
	if t.Omit > 0 {
		length += fmt.Sprintf(" after %v warm-up", t.Omit)
	}
	parts := []string{streams, length}
	switch {
	case t.Kind == spec.UDPStream:
		size := t.SendSize
		if t.GSOSize > 0 {
			size = t.GSOSize // the send is cut into datagrams of this size
		}
		dgrams := fmt.Sprintf("%d-byte datagrams", size)
		switch {
		case t.RateBitsPerSecond > 0 && len(t.Streams()) > 1:
			dgrams += " at " + units.FormatBits(t.RateBitsPerSecond) + " each"
		case t.RateBitsPerSecond > 0:
			dgrams += " at " + units.FormatBits(t.RateBitsPerSecond)
		default:
			dgrams += " unpaced" // as fast as the sender can
		}
		parts = append(parts, dgrams)
		if t.Directions()[0] == spec.ServerToClient {
			parts = append(parts, "the server sends")
		}
	case t.Kind.RR():
		sizes := fmt.Sprintf("%d-byte requests and responses", t.RequestSize)
		if t.RequestSize != t.ResponseSize {
			sizes = fmt.Sprintf("%d-byte requests, %d-byte responses", t.RequestSize, t.ResponseSize)
		}
		parts = append(parts, sizes)
		if t.Burst > 1 {
			parts = append(parts, fmt.Sprintf("%d in flight", t.Burst))
		}
	default:
		// The defaults (the system's congestion control, random
		// payload) go unsaid; the environment lines (-v) and the JSON
		// name the congestion control the sockets used.
		if t.CongestionControl != "" {
			parts = append(parts, "congestion control "+t.CongestionControl)
		}
		if t.Payload.Kind != spec.PayloadRandom && t.Payload.Kind != "" {
			parts = append(parts, "payload "+t.Payload.Kind)
		}
		if t.RateBitsPerSecond > 0 {
			parts = append(parts, "paced to "+units.FormatBits(t.RateBitsPerSecond)+" per stream")
		}
	}
	head := fmt.Sprintf("wirespeed %s to %s: ", t.Kind, server)
	for _, l := range fitList(head, parts, ", ", 2) {
		fmt.Fprintln(w, l)
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
		fmt.Fprintf(w, "[ ID] %-14s %-17s  %12s        %12s\n", "Direction", "Interval", "Transactions", "trans/s")
	case k == spec.UDPStream:
		fmt.Fprintf(w, "[ ID] %-14s %-17s  %11s  %14s  %8s  %s\n", "Direction", "Interval", "Transfer", "Bitrate", "Jitter", "Lost/Total Datagrams")
	default:
		fmt.Fprintf(w, "[ ID] %-14s %-17s  %11s  %14s  %s\n", "Direction", "Interval", "Transfer", "Bitrate", "Retr  Cwnd")
	}
}

// IntervalHeaderIn is the line above the lines Ticks writes: RRUL's
// (RRULIntervalHeader) unless verbose, IntervalHeader's otherwise.
func IntervalHeaderIn(w io.Writer, k spec.Kind, verbose bool) {
	if k == spec.RRUL && !verbose {
		RRULIntervalHeader(w)
		return
	}
	IntervalHeader(w, k)
}

// Ticks writes the interval lines of ticks of a test of kind k, which
// come in a TickOrder's order, with the bitrate in unit u: each stream's
// and their sum (TickIn), but an RRUL run's one line an interval, its
// sums and its probes (RRULTick), unless verbose.
func Ticks(w io.Writer, ticks []result.Tick, k spec.Kind, u units.RateUnit, verbose bool) {
	if k != spec.RRUL || verbose {
		for _, tk := range ticks {
			TickIn(w, tk, u)
		}
		return
	}
	for len(ticks) > 0 {
		n := 1
		for n < len(ticks) && ticks[n].Index == ticks[0].Index {
			n++
		}
		RRULTick(w, ticks[:n], u)
		ticks = ticks[n:]
	}
}

// TickIn writes the interval lines of one tick: one per stream, and a
// [SUM] line when the direction has several streams, with the bitrate in
// unit u (-f; 0: adaptive bits).
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
		fmt.Fprintf(w, "[%s] %-14s %6.2f-%-6.2f sec  %12d trans  %12.0f trans/s\n",
			id, dirLabel(d), iv.StartS, iv.EndS, iv.Packets, iv.TransactionsPerSecond)
		return
	}
	fmt.Fprintf(w, "[%s] %-14s %6.2f-%-6.2f sec  %11s  %14s",
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

// TextIn writes the result of one run, the answer first: the netperf
// table (with UDP's datagrams or the transactions' latency under it),
// the interval over iterations, what limited the run, then the
// warnings, each on one line of at most Width columns. With o.Verbose
// the detail follows the answer: each stream's figures, each side's CPU,
// device, environment and data path, the notes of the limit and the
// warnings in full.
func TextIn(w io.Writer, res result.Result, o TextOptions) {
	u := o.Unit
	if res.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the run was stopped early; the figures cover only what was measured before.")
	}
	// RRUL's answer leads, what limited it under it, then its detail
	// (underload.go).
	limitShown := false
	if res.Summary.UnderLoad != nil {
		UnderLoadAnswer(w, res)
		if res.Summary.Limit != nil {
			limitedBy(w, res, o.Verbose)
			limitShown = true
		}
		fmt.Fprintln(w)
		UnderLoadDetail(w, res)
	}
	switch {
	case res.Spec.Kind == spec.UDPStream:
		udpTable(w, res, u)
		udpLines(w, res, o.Verbose)
	case res.Spec.Kind.RR():
		RRTable(w, res)
		rrLines(w, res, o.Verbose)
	default:
		table(w, res, u)
	}
	if res.Summary.Confidence != nil {
		fmt.Fprintln(w)
		confidence(w, res.Summary, o.Verbose)
	}
	if res.Summary.Limit != nil && !limitShown {
		fmt.Fprintln(w)
		limitedBy(w, res, o.Verbose)
	}
	if o.Verbose {
		if !res.Spec.Kind.RR() && res.Spec.Kind != spec.UDPStream {
			fmt.Fprintln(w)
			sides(w, res, u)
		}
		if hasCPU(res.Summary) {
			fmt.Fprintln(w)
			CPU(w, res.Summary) // the lines, and under them whose load is in them
		}
		if res.Local.Wire != nil || res.Remote.Wire != nil {
			fmt.Fprintln(w)
			Wire(w, res)
		}
		if res.Local.Env != nil || res.Remote.Env != nil {
			fmt.Fprintln(w)
			EnvSummary(w, res)
		}
		DataPath(w, res)
	}
	if !o.Verbose {
		textWarnings(w, othersWarnings(res.Summary, false, oneHost(res), othersLimited(res)), false)
	}
	warnings(w, res.Warnings, o.Verbose)
}

func udpTable(w io.Writer, res result.Result, unit units.RateUnit) {
	tw := newTable(w)
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
}

// udpLines write, under a UDP_STREAM's table, each direction's
// datagrams as iperf3's summary has them (lost of the total, jitter),
// what the kernels dropped, and its fragmentation. By default they are
// short and name only the counts that are not zero; verbose, each
// kernel's counters in full.
func udpLines(w io.Writer, res result.Result, verbose bool) {
	for _, d := range res.Directions {
		u := d.Summary.UDPSummary
		if u == nil {
			continue
		}
		snd, rcv := res.Local.Counters, res.Remote.Counters
		if d.Sender == result.Remote {
			snd, rcv = rcv, snd
		}
		fmt.Fprintln(w)
		if verbose {
			fmt.Fprintf(w, "%s datagrams: %d sent, %d received, %d lost (%.3g%%), %d out of order, %d duplicate; jitter %.3f ms; %d send errors\n",
				dirLabel(d.Direction), u.PacketsSent, u.PacketsReceived, u.Lost, u.LossPct, u.OutOfOrder, u.Duplicates, u.JitterMs, u.SendErrors)
			if rcv != nil {
				fmt.Fprintf(w, "  receiver's kernel (%s): Udp RcvbufErrors %d, InErrors %d over the window (dropped at its socket buffer, not on the wire)\n",
					d.Receiver, rcv.UDP.RcvbufErrors, rcv.UDP.InErrors)
			}
			if snd != nil {
				fmt.Fprintf(w, "  sender's kernel (%s): Udp SndbufErrors %d over the window: %d refused by the kernel (EAGAIN, ENOBUFS) and retried, %d taken and then dropped at a full queue of the sender's host (or other sockets' refusals)\n",
					d.Sender, snd.UDP.SndbufErrors, min(u.SendErrors, snd.UDP.SndbufErrors), max(snd.UDP.SndbufErrors-u.SendErrors, 0))
			}
			fragments(w, d, snd, rcv)
			continue
		}
		line := fmt.Sprintf("%s datagrams: %d/%d lost (%.3g%%), jitter %.3f ms", dirLabel(d.Direction),
			u.Lost, u.PacketsSent, u.LossPct, u.JitterMs)
		for _, c := range []struct {
			n    int64
			what string
		}{{u.OutOfOrder, "out of order"}, {u.Duplicates, "duplicate"}, {u.SendErrors, "sends refused and retried"}} {
			if c.n > 0 {
				line += fmt.Sprintf(", %d %s", c.n, c.what)
			}
		}
		fmt.Fprintln(w, line)
		if rcv != nil && rcv.UDP.RcvbufErrors > 0 {
			fmt.Fprintf(w, "  %d dropped by the receiver's kernel (%s) at its socket buffer (Udp RcvbufErrors)\n", rcv.UDP.RcvbufErrors, d.Receiver)
		}
		if snd != nil {
			if local := snd.UDP.SndbufErrors - u.SendErrors; local > 0 {
				fmt.Fprintf(w, "  %d Udp SndbufErrors on the sender's host (%s) beyond its refused sends: a full queue there\n", local, d.Sender)
			}
		}
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
	tw := newTable(w)
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
		fmt.Fprintf(w, "* %s opens a socket per transaction: the sizes each one starts with (tcp_wmem, tcp_rmem)\n", res.Spec.Kind)
	case "asked":
		fmt.Fprintf(w, "* %s opens a socket per transaction: the size -s asked for on each\n", res.Spec.Kind)
	}
}

// rrLines write, under a request/response table, the latency of the
// transactions; verbose, the transactions each side counted over the
// whole run too, which the default shows only when some timed out.
func rrLines(w io.Writer, res result.Result, verbose bool) {
	for _, d := range res.Directions {
		rr := d.Summary.RRSummary
		if rr == nil {
			continue
		}
		l := rr.Latency
		fmt.Fprintln(w)
		if verbose {
			fmt.Fprintf(w, "latency us: min %.2f  mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  stddev %.2f  (%d transactions)\n",
				l.Min, l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max, l.StdDev, l.Count)
			fmt.Fprintf(w, "transactions over the whole run: client %d, server %d", rr.ClientTransactions, rr.ServerTransactions)
			if rr.Timeouts > 0 {
				fmt.Fprintf(w, "; %d timed out", rr.Timeouts)
			}
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "latency us: min %s, p50 %s, p90 %s, p99 %s, p99.9 %s, max %s; mean %s, stddev %s\n",
			micros(l.Min), micros(l.P50), micros(l.P90), micros(l.P99), micros(l.P999), micros(l.Max), micros(l.Mean), micros(l.StdDev))
		if rr.Timeouts > 0 {
			fmt.Fprintf(w, "%d transactions timed out\n", rr.Timeouts)
		}
	}
}

// micros is a latency in microseconds with iperf's precision, three
// significant digits or the whole number: 5.23, 62.5, 351, 2560.
func micros(us float64) string {
	switch {
	case us < 9.995:
		return fmt.Sprintf("%.2f", us)
	case us < 99.95:
		return fmt.Sprintf("%.1f", us)
	}
	return fmt.Sprintf("%.0f", us)
}

// table writes netperf's TCP_STREAM table: one row per direction, with
// the socket sizes the kernel granted, and a total row for two
// directions, throughputs in unit u.
func table(w io.Writer, res result.Result, u units.RateUnit) {
	if hasCPU(res.Summary) {
		cpuTable(w, res, u)
		return
	}
	tw := newTable(w)
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
		tw := newTable(w)
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
		mptcpRows(w, d.Streams)
	}
}

// mptcpRows says, under --mptcp, what each stream side's kernel said of
// its connection: MPTCP with its subflows and data-level bytes
// (MPTCP_INFO), or fallen back to TCP. Nothing without --mptcp.
func mptcpRows(w io.Writer, streams []result.Stream) {
	for _, s := range streams {
		for _, ss := range []result.StreamSide{s.Sender, s.Receiver} {
			mp := ss.MPTCP
			switch {
			case mp == nil:
			case !mp.Active:
				fmt.Fprintf(w, "  stream %d %s %s: TCP, fell back from MPTCP\n", s.ID, ss.Side, ss.Role)
			case mp.Info == nil:
				fmt.Fprintf(w, "  stream %d %s %s: MPTCP\n", s.ID, ss.Side, ss.Role)
			default:
				mi := mp.Info
				fmt.Fprintf(w, "  stream %d %s %s: MPTCP, %d subflow%s; data level: %d bytes sent, %d acked, %d received, %d retransmissions\n",
					s.ID, ss.Side, ss.Role, mi.Subflows, plural(mi.Subflows), mi.BytesSent, mi.BytesAcked, mi.BytesReceived, mi.Retransmits)
			}
		}
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

// warnings lists caveats, one per line: in full when verbose, else each
// as the most of its clauses that fit in Width (fitWarning).
func warnings(w io.Writer, ws []result.Warning, verbose bool) {
	for _, x := range ws {
		if verbose {
			fmt.Fprintf(w, "warning: %s\n", WarningText(x))
			continue
		}
		fmt.Fprintln(w, fitWarning("warning: ", x, Width))
	}
}

// textWarnings is warnings for caveats of words alone: the statistics',
// a mesh's.
func textWarnings(w io.Writer, ss []string, verbose bool) {
	ws := make([]result.Warning, 0, len(ss))
	for _, s := range ss {
		ws = append(ws, result.Words(s))
	}
	warnings(w, ws, verbose)
}

// TradeoffIn writes two runs of opposite directions side by side, with
// the ratio of the second's throughput to the first's, throughputs in
// unit u (-f; 0: netperf's 10^6bits/sec).
func TradeoffIn(w io.Writer, a, b result.Result, t result.Tradeoff, u units.RateUnit) {
	fmt.Fprintln(w, "Tradeoff: one direction, then the other, over the same path")
	tw := newTable(w)
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
	fmt.Fprintln(w, brief(fmt.Sprintf("%s / %s = %.3f%s", b.Spec.Kind, a.Spec.Kind, t.Ratio, tradeoffTest(t)), Width))
	if tt := t.Test; tt != nil {
		textWarnings(w, tt.Warnings, false)
	}
	for _, r := range []result.Result{a, b} {
		if l := r.Summary.Limit; l != nil {
			fmt.Fprintln(w, limitLine(string(r.Spec.Kind)+" limited by: ", l))
		}
	}
	for _, r := range []result.Result{a, b} {
		if r.Interrupted {
			fmt.Fprintf(w, "INTERRUPTED: %s was stopped early.\n", r.Spec.Kind)
		}
		warnings(w, r.Warnings, false)
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
	return "  (single runs, not tested: -I repeats each direction)"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
