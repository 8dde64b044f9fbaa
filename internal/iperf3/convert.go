package iperf3

import (
	"fmt"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// A wirespeed stream id is k+1 for the k-th stream spec.Test.Streams
// plans; iperf3 numbers the same stream streamID(k).
func iperf3ID(wirespeedID int) int { return streamID(wirespeedID - 1) }

// clientResults is what this client sends the server after
// EXCHANGE_RESULTS: its own figures in iperf3's form. Bytes are the
// stream's whole life, or its window when there was a warm-up (iperf3
// leaves the omitted seconds out).
func clientResults(t spec.Test, local result.SideResult) Results {
	r := Results{SenderHasRetransmits: -1}
	if c := local.CPU; c != nil && c.ElapsedS > 0 {
		r.CPUUtilUser = 100 * c.ProcessUserS / c.ElapsedS
		r.CPUUtilSystem = 100 * c.ProcessSystemS / c.ElapsedS
		r.CPUUtilTotal = r.CPUUtilUser + r.CPUUtilSystem
	}
	for _, f := range local.Flows {
		if f.Role == result.Sender {
			r.SenderHasRetransmits = 0
			if !t.Kind.UDP() {
				r.SenderHasRetransmits = 1
			}
		}
		for _, s := range f.Streams {
			sr := StreamResult{ID: iperf3ID(s.ID), Bytes: s.TotalBytes, Retransmits: -1, EndTime: f.ElapsedS}
			if t.Omit > 0 {
				sr.Bytes = s.Bytes
			}
			switch {
			case f.Role == result.Sender:
				sr.Packets = s.TotalPackets
				if !t.Kind.UDP() {
					sr.Retransmits = s.Retransmits
				}
			case t.Kind.UDP():
				sr.Jitter = s.JitterMs / 1e3
				sr.Errors = s.Lost
				sr.Packets = s.Packets + s.Lost
			}
			r.Streams = append(r.Streams, sr)
		}
	}
	return r
}

// remoteSide turns an iperf3 server's results into the remote side of a
// wirespeed result, and says what iperf3 could not tell.
func remoteSide(t spec.Test, theirs Results) (result.SideResult, []string) {
	rs := result.SideResult{Side: result.Remote}
	byID := map[int]StreamResult{}
	for _, s := range theirs.Streams {
		byID[s.ID] = s
	}
	warnings := []string{
		"remote side is iperf3: totals only (no intervals, TCP_INFO, socket sizes, kernel counters)",
	}
	elapsed := 0.0
	for _, d := range t.Directions() {
		role := result.Receiver
		if d == spec.ServerToClient {
			role = result.Sender
		}
		f := result.Flow{Direction: d, Side: result.Remote, Role: role, Intervals: []result.Interval{}}
		for _, st := range t.Streams() {
			if st.Dir != d {
				continue
			}
			ss := result.StreamSide{ID: st.ID, Side: result.Remote, Role: role, Complete: true, CongestionControl: theirs.CongestionUsed}
			s, ok := byID[iperf3ID(st.ID)]
			if !ok {
				warnings = append(warnings, fmt.Sprintf("the iperf3 server's results have no stream %d (wirespeed's stream %d)", iperf3ID(st.ID), st.ID))
				f.Streams = append(f.Streams, ss)
				continue
			}
			ss.Bytes, ss.TotalBytes = s.Bytes, s.Bytes
			if role == result.Sender {
				ss.Retransmits = max(s.Retransmits, 0)
				ss.Packets, ss.TotalPackets = s.Packets, s.Packets
			} else if t.Kind.UDP() {
				ss.Lost = s.Errors
				ss.Packets = s.Packets - s.Errors
				ss.TotalPackets = ss.Packets
				ss.SeqUnique = ss.Packets
				ss.JitterMs = s.Jitter * 1e3
			}
			f.Bytes += ss.Bytes
			f.ElapsedS = max(f.ElapsedS, s.EndTime-s.StartTime)
			f.Streams = append(f.Streams, ss)
		}
		elapsed = max(elapsed, f.ElapsedS)
		rs.Flows = append(rs.Flows, f)
	}
	if t.CPU && elapsed > 0 {
		rs.CPU = &measure.CPU{
			ProcessUserS:   theirs.CPUUtilUser / 100 * elapsed,
			ProcessSystemS: theirs.CPUUtilSystem / 100 * elapsed,
			ElapsedS:       elapsed,
			BusiestCPU:     -1,
		}
		warnings = append(warnings, fmt.Sprintf("remote CPU: the iperf3 process's own, %.1f%% of one CPU; no system-wide figure or service demand",
			theirs.CPUUtilTotal))
	}
	return rs, warnings
}
