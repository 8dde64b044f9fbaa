package result

import (
	"slices"
	"strings"

	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// Join builds the result of a run of t from what the client (local) and
// the server (remote) measured. For each direction the receiver's count is
// the result and the sender's is kept beside it; for a test with two
// directions the summary and each interval are the sums of both.
func Join(t spec.Test, local, remote SideResult) Result {
	res := Result{
		Spec:        t,
		Interrupted: local.Interrupted || remote.Interrupted,
		Local:       SideInfo{Hostname: local.Hostname, Counters: local.Counters, Env: local.Env},
		Remote:      SideInfo{Hostname: remote.Hostname, Counters: remote.Counters, Env: remote.Env},
		Intervals:   []Interval{},
		Streams:     []Stream{},
	}
	for _, dir := range t.Directions() {
		// The active role's side is "snd": the sender, or the requester
		// (always the client) of a request/response test.
		snd, rcv := local, remote
		if dir == spec.ServerToClient {
			snd, rcv = remote, local
		}
		sf, okS := findFlow(snd, dir)
		rf, okR := findFlow(rcv, dir)
		if !okS {
			res.Warnings = append(res.Warnings, Coded(WarnNoSenderFigures, map[string]string{"direction": string(dir), "side": string(snd.Side)}, nil))
		}
		if !okR {
			res.Warnings = append(res.Warnings, Coded(WarnNoReceiverFigures, map[string]string{"direction": string(dir), "side": string(rcv.Side)}, nil))
		}
		var d DirectionResult
		switch {
		case t.Kind.RR():
			d = joinRR(dir, snd.Side, rcv.Side, sf, rf)
		default:
			d = joinDirection(dir, snd.Side, rcv.Side, sf, rf)
			if t.Kind.UDP() {
				addUDP(&d, sf, rf)
				if okS {
					res.Warnings = append(res.Warnings, udpWarnings(t, d, okR, snd.Counters, rcv.Counters)...)
				}
			}
		}
		if !t.Kind.RR() {
			res.Warnings = append(res.Warnings, joinAmount(t, &d, sf, rf, okS, okR)...)
		}
		res.Directions = append(res.Directions, d)
		res.Streams = append(res.Streams, d.Streams...)
	}
	for _, s := range []SideResult{local, remote} {
		if s.Error != "" {
			res.Warnings = append(res.Warnings, Coded(WarnSideError, map[string]string{"side": string(s.Side), "message": s.Error}, nil))
		}
		for _, w := range s.Warnings {
			res.Warnings = append(res.Warnings, Coded(WarnSideWarning, map[string]string{"side": string(s.Side), "message": w}, nil))
		}
		if s.Counters != nil && s.Counters.ChecksumErrors() > 0 {
			res.Warnings = append(res.Warnings, Coded(WarnChecksumErrors, map[string]string{"side": string(s.Side)},
				map[string]float64{"in_csum_errors": float64(s.Counters.ChecksumErrors())}))
		}
	}
	res.Summary, res.Intervals = sumDirections(res.Directions)
	joinCPU(&res, local, remote)
	joinWire(&res, local, remote)
	joinDataPath(&res, local, remote)
	joinMPTCP(&res, local, remote)
	warnUDPBatch(&res) // UDP batches
	return res
}

func findFlow(s SideResult, dir spec.Direction) (Flow, bool) {
	for _, f := range s.Flows {
		if f.Direction == dir {
			return f, true
		}
	}
	return Flow{}, false
}

func joinDirection(dir spec.Direction, sndSide, rcvSide Side, sf, rf Flow) DirectionResult {
	d := DirectionResult{
		Direction: dir,
		Sender:    sndSide,
		Receiver:  rcvSide,
		Summary:   summarize(sf, rf),
		Intervals: []Interval{},
		Streams:   []Stream{},
	}
	for i, ri := range rf.Intervals {
		iv := ri
		if i < len(sf.Intervals) {
			iv.Retransmits = sf.Intervals[i].Retransmits
			iv.CwndBytes = sf.Intervals[i].CwndBytes
			iv.RTTMicros = sf.Intervals[i].RTTMicros
			iv.NotsentBytes = sf.Intervals[i].NotsentBytes
		}
		d.Intervals = append(d.Intervals, iv)
	}
	byID := map[int]StreamSide{}
	for _, s := range rf.Streams {
		byID[s.ID] = s
	}
	for _, ss := range sf.Streams {
		rs, ok := byID[ss.ID]
		if !ok {
			rs = StreamSide{ID: ss.ID, Side: rcvSide, Role: Receiver}
		}
		st := Stream{ID: ss.ID, Direction: dir, Sender: ss, Receiver: rs}
		st.Summary = Summary{
			Bytes:               rs.Bytes,
			ElapsedS:            rf.ElapsedS,
			BitsPerSecond:       Rate(rs.Bytes, rf.ElapsedS),
			SenderBytes:         ss.Bytes,
			SenderElapsedS:      sf.ElapsedS,
			SenderBitsPerSecond: Rate(ss.Bytes, sf.ElapsedS),
			Retransmits:         ss.Retransmits,
		}
		d.Streams = append(d.Streams, st)
	}
	return d
}

func summarize(sf, rf Flow) Summary {
	s := Summary{
		Bytes:          rf.Bytes,
		ElapsedS:       rf.ElapsedS,
		BitsPerSecond:  Rate(rf.Bytes, rf.ElapsedS),
		SenderBytes:    sf.Bytes,
		SenderElapsedS: sf.ElapsedS,
	}
	s.SenderBitsPerSecond = Rate(sf.Bytes, sf.ElapsedS)
	for _, st := range sf.Streams {
		s.Retransmits += st.Retransmits
	}
	return s
}

// sumDirections adds the directions' summaries and intervals. With one
// direction it returns that direction's own. Elapsed is the longest
// window; throughput is the sum of the directions' rates, each over its
// own window.
func sumDirections(ds []DirectionResult) (Summary, []Interval) {
	if len(ds) == 1 {
		return ds[0].Summary, ds[0].Intervals
	}
	var s Summary
	n := 0
	for _, d := range ds {
		s.Bytes += d.Summary.Bytes
		s.SenderBytes += d.Summary.SenderBytes
		s.BitsPerSecond += d.Summary.BitsPerSecond
		s.SenderBitsPerSecond += d.Summary.SenderBitsPerSecond
		s.Retransmits += d.Summary.Retransmits
		s.ElapsedS = max(s.ElapsedS, d.Summary.ElapsedS)
		s.SenderElapsedS = max(s.SenderElapsedS, d.Summary.SenderElapsedS)
		n = max(n, len(d.Intervals))
	}
	ivs := make([]Interval, n)
	for _, d := range ds {
		for i, iv := range d.Intervals {
			sum := &ivs[i]
			if sum.EndS == 0 {
				sum.StartS, sum.EndS = iv.StartS, iv.EndS
			}
			sum.Bytes += iv.Bytes
			sum.BitsPerSecond += iv.BitsPerSecond
			sum.Retransmits += iv.Retransmits
			sum.CwndBytes += iv.CwndBytes
			sum.RTTMicros = max(sum.RTTMicros, iv.RTTMicros)
		}
	}
	return s, ivs
}

// Rate is payload bits per second: bytes*8/seconds, 0 for an empty window.
func Rate(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) * 8 / seconds
}

// Ratio is a/b, 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// PerSecond is n per second, 0 for an empty window.
func PerSecond(n int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / seconds
}

// addUDP adds the datagram accounting of a UDP_STREAM direction to its
// summary and to each stream's. For every stream the datagrams counted are
// those the sender numbered from the receiver's first of the window to its
// last: the receiver says how many of them arrived, so the loss is exact.
func addUDP(d *DirectionResult, sf, rf Flow) {
	byID := map[int]StreamSide{}
	for _, s := range rf.Streams {
		byID[s.ID] = s
	}
	sum := &UDPSummary{}
	var jitter float64
	for i := range d.Streams {
		st := &d.Streams[i]
		snd, rcv := st.Sender, st.Receiver
		u := &UDPSummary{SendErrors: snd.SendErrors, OutOfOrder: rcv.OutOfOrder, Duplicates: rcv.Duplicates, JitterMs: rcv.JitterMs}
		if _, ok := byID[st.ID]; ok && (rcv.SeqFirst > 0 || rcv.SeqUnique > 0) {
			u.PacketsSent = snd.TotalPackets - int64(rcv.SeqFirst)
			u.PacketsReceived = rcv.SeqUnique
		} else {
			// Nothing arrived (the receiver's window was the one its
			// schedule gave it), or the receiver sent no figures: the
			// sender's count over its own window, all of it lost.
			u.PacketsSent = snd.Packets
		}
		u.Lost = u.PacketsSent - u.PacketsReceived
		u.LossPct = 100 * Ratio(float64(u.Lost), float64(u.PacketsSent))
		st.Summary.UDPSummary = u
		sum.PacketsSent += u.PacketsSent
		sum.PacketsReceived += u.PacketsReceived
		sum.SendErrors += u.SendErrors
		sum.OutOfOrder += u.OutOfOrder
		sum.Duplicates += u.Duplicates
		jitter += u.JitterMs
	}
	sum.Lost = sum.PacketsSent - sum.PacketsReceived
	sum.LossPct = 100 * Ratio(float64(sum.Lost), float64(sum.PacketsSent))
	if len(d.Streams) > 0 {
		sum.JitterMs = jitter / float64(len(d.Streams))
	}
	d.Summary.UDPSummary = sum
}

// joinRR joins a request/response test: the requester's (client's)
// figures are the result; the responder's count of answered requests is
// kept beside it.
func joinRR(dir spec.Direction, reqSide, respSide Side, req, resp Flow) DirectionResult {
	d := joinDirection(dir, reqSide, respSide, req, resp)
	// joinDirection takes the passive side's figures as the result; for a
	// request/response test the requester measures.
	d.Summary = Summary{
		Bytes:               req.Bytes,
		ElapsedS:            req.ElapsedS,
		BitsPerSecond:       Rate(req.Bytes, req.ElapsedS),
		SenderBytes:         resp.Bytes,
		SenderElapsedS:      resp.ElapsedS,
		SenderBitsPerSecond: Rate(resp.Bytes, resp.ElapsedS),
		RRSummary:           rrSummary(req.Streams, resp.Streams, req.ElapsedS, req.Latency),
	}
	d.Intervals = append([]Interval{}, req.Intervals...)
	for i := range d.Streams {
		st := &d.Streams[i]
		var lat *stats.Latency
		if st.Sender.Latency != nil {
			lat = st.Sender.Latency
		}
		st.Summary = Summary{
			Bytes:         st.Sender.Bytes,
			ElapsedS:      req.ElapsedS,
			BitsPerSecond: Rate(st.Sender.Bytes, req.ElapsedS),
			SenderBytes:   st.Receiver.Bytes,
			RRSummary:     rrSummary([]StreamSide{st.Sender}, []StreamSide{st.Receiver}, req.ElapsedS, lat),
		}
	}
	return d
}

func rrSummary(req, resp []StreamSide, elapsed float64, lat *stats.Latency) *RRSummary {
	r := &RRSummary{}
	for _, s := range req {
		r.Transactions += s.Packets
		r.Timeouts += s.Timeouts
		r.ClientTransactions += s.TotalPackets
	}
	for _, s := range resp {
		r.ServerTransactions += s.TotalPackets
	}
	r.TransactionsPerSecond = PerSecond(r.Transactions, elapsed)
	if lat != nil {
		r.Latency = *lat
	}
	return r
}

// CongestionControl is the TCP congestion control that side's data
// sockets used, as the kernel reported it (TCP_CONGESTION) after they were
// set up: the spec's --cc or the system default. Several names, should the
// streams differ, are joined with "/"; "" when the side had no TCP data
// socket that reported one (UDP, an iperf3 peer).
func (r Result) CongestionControl(side Side) string {
	var names []string
	for _, st := range r.Streams {
		for _, s := range []StreamSide{st.Sender, st.Receiver} {
			if s.Side == side && s.CongestionControl != "" && !slices.Contains(names, s.CongestionControl) {
				names = append(names, s.CongestionControl)
			}
		}
	}
	return strings.Join(names, "/")
}

// joinAmount records a fixed amount's outcome on d, reached when the
// receiver's flow rf counts all of it (every stream's TotalBytes), and
// warns when it was not: the sender's flow sf counts less, so the
// sender ran out of time (-l), or the receiver did not get all that was
// sent. An iperf3 peer reports its streams' totals too, so the cause is
// named against one as against wirespeed.
func joinAmount(t spec.Test, d *DirectionResult, sf, rf Flow, okS, okR bool) []Warning {
	a := t.Amount()
	if a <= 0 {
		return nil
	}
	var sent, got int64
	for _, s := range sf.Streams {
		sent += s.TotalBytes
	}
	for _, s := range rf.Streams {
		got += s.TotalBytes
	}
	d.Amount = &Amount{Bytes: a, Reached: okR && got >= a}
	switch {
	case d.Amount.Reached:
		return nil
	}
	dir := map[string]string{"direction": string(d.Direction)}
	switch {
	case !okS:
		return []Warning{Coded(WarnAmountNoSender, dir, map[string]float64{"amount_bytes": float64(a), "received_bytes": float64(got)})}
	case sent < a:
		return []Warning{Coded(WarnAmountLengthOut, dir, map[string]float64{"amount_bytes": float64(a), "sent_bytes": float64(sent), "length_s": t.Duration.Seconds()})}
	}
	return []Warning{Coded(WarnAmountLost, dir, map[string]float64{"amount_bytes": float64(a), "sent_bytes": float64(sent), "received_bytes": float64(got)})}
}
