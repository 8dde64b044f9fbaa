package result

import (
	"math"
	"slices"
	"time"

	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// Iteration is one run of a repeated measurement, as the results document
// keeps it: its own summary (throughput, bytes, CPU), so that anyone can
// recompute the mean and the confidence interval.
type Iteration struct {
	// Index is 1-based, in the order the iterations ran.
	Index       int       `json:"index"`
	Started     time.Time `json:"started"`
	Interrupted bool      `json:"interrupted,omitempty"`
	Summary
	Warnings []Warning `json:"warnings,omitempty"`
}

// IterationOf keeps what a repeated measurement records of one run.
func IterationOf(index int, r Result) Iteration {
	return Iteration{Index: index, Started: r.Started, Interrupted: r.Interrupted, Summary: r.Summary, Warnings: r.Warnings}
}

// Confidence is the confidence interval of a mean over iterations, netperf's
// -I: its own fields are the throughput's, LocalCPU and RemoteCPU the CPU
// utilization's. No field is ever NaN or infinite (JSON has no such
// numbers): a figure whose interval cannot be computed (fewer than two
// iterations) has null bounds and width.
type Confidence struct {
	// Level is a fraction: 0.99 for 99%.
	Level float64 `json:"level"`
	// WidthPct is the width asked, full width as a percentage of the mean:
	// 5 asks for +/-2.5%.
	WidthPct float64 `json:"width_pct"`
	// Iterations is how many iterations the mean is over.
	Iterations int `json:"iterations"`
	// Stop says why iterating stopped: spec.ReasonReached (every figure's
	// interval is within WidthPct), spec.ReasonMaxHit (the maximum was
	// reached first) or spec.ReasonInterrupted.
	Stop spec.Reason `json:"stop"`
	FigureConfidence
	LocalCPU  *FigureConfidence `json:"local_cpu,omitempty"`
	RemoteCPU *FigureConfidence `json:"remote_cpu,omitempty"`
}

// FigureConfidence is the interval of one figure: throughput (bits per
// second) or CPU utilization (percent).
type FigureConfidence struct {
	// AchievedPct is the full width of the interval as a percentage of the
	// mean; null when it cannot be computed.
	AchievedPct *float64 `json:"achieved_pct"`
	// Reached is true when AchievedPct is no more than the width asked.
	Reached bool `json:"reached"`
	// Lo and Hi bound the interval, in the figure's unit; null when it
	// cannot be computed.
	Lo *float64 `json:"lo"`
	Hi *float64 `json:"hi"`
}

// HalfWidthPct is the +/- of the interval as a percentage of the mean
// (half AchievedPct), and false when there is none.
func (f FigureConfidence) HalfWidthPct() (float64, bool) {
	if f.AchievedPct == nil {
		return 0, false
	}
	return *f.AchievedPct / 2, true
}

// Point is one message size of a sweep: the result of all its iterations,
// as at the top level of a document (the mean summary, every iteration,
// and the last iteration's directions, streams and intervals).
type Point struct {
	// MsgSize is the message size of this point: bytes per send call.
	MsgSize int `json:"msg_size"`
	Result
}

// Complete reports whether the point's measurement ended by itself, not by
// an interrupt: a resumed sweep keeps complete points and runs the others
// again.
func (p Point) Complete() bool { return !p.Interrupted && len(p.Directions) > 0 }

// Mean returns the mean of several runs of the same test: the last run's
// result with its summary, and each direction's, replaced by the mean of
// the runs' (counts rounded to the nearest integer, CPU figures averaged
// field by field, service demand too, as netperf averages it). Streams and
// intervals are the last run's. It returns the zero Result for no runs.
func Mean(rs []Result) Result {
	if len(rs) == 0 {
		return Result{}
	}
	out := rs[len(rs)-1]
	sums := make([]Summary, len(rs))
	for i, r := range rs {
		sums[i] = r.Summary
	}
	out.Summary = MeanSummary(sums)
	out.Directions = append([]DirectionResult(nil), out.Directions...)
	for d := range out.Directions {
		var ds []Summary
		for _, r := range rs {
			if d < len(r.Directions) && r.Directions[d].Direction == out.Directions[d].Direction {
				ds = append(ds, r.Directions[d].Summary)
			}
		}
		out.Directions[d].Summary = MeanSummary(ds)
	}
	return out
}

// MeanSummary is the field-by-field mean of summaries. A CPU figure is the
// mean over the summaries that have it, nil when none has.
func MeanSummary(ss []Summary) Summary {
	if len(ss) == 0 {
		return Summary{}
	}
	n := float64(len(ss))
	var m Summary
	var bytes, sbytes, retr float64
	var wires, frames float64 // summaries with the sender's device figures, and its frames
	var local, remote []measure.CPU
	for _, s := range ss {
		m.BitsPerSecond += s.BitsPerSecond / n
		m.SenderBitsPerSecond += s.SenderBitsPerSecond / n
		m.ElapsedS += s.ElapsedS / n
		m.SenderElapsedS += s.SenderElapsedS / n
		bytes += float64(s.Bytes) / n
		sbytes += float64(s.SenderBytes) / n
		retr += float64(s.Retransmits) / n
		if s.SenderWirePacketsPerSecond > 0 {
			wires++
			m.SenderWirePacketsPerSecond += s.SenderWirePacketsPerSecond
			m.SenderWireBytesPerPacket += s.SenderWireBytesPerPacket
		}
		if s.SenderWireFramesPerSecond > 0 {
			frames++
			m.SenderWireFramesPerSecond += s.SenderWireFramesPerSecond
			m.SenderWireBytesPerFrame += s.SenderWireBytesPerFrame
		}
		if s.LocalCPU != nil {
			local = append(local, *s.LocalCPU)
		}
		if s.RemoteCPU != nil {
			remote = append(remote, *s.RemoteCPU)
		}
	}
	if wires > 0 {
		m.SenderWirePacketsPerSecond /= wires
		m.SenderWireBytesPerPacket /= wires
	}
	if frames > 0 {
		m.SenderWireFramesPerSecond /= frames
		m.SenderWireBytesPerFrame /= frames
	}
	m.Bytes = int64(math.Round(bytes))
	m.SenderBytes = int64(math.Round(sbytes))
	m.Retransmits = int64(math.Round(retr))
	m.LocalCPU = MeanCPU(local)
	m.RemoteCPU = MeanCPU(remote)
	m.UDPSummary = meanUDP(ss)
	m.RRSummary = meanRR(ss)
	m.UnderLoad = meanUnderLoad(ss)
	return m
}

// meanUDP is the mean of the summaries' datagram accounting, nil when none
// has it: counts averaged and rounded, the loss percentage recomputed from
// the mean counts.
func meanUDP(ss []Summary) *UDPSummary {
	var us []*UDPSummary
	for _, s := range ss {
		if s.UDPSummary != nil {
			us = append(us, s.UDPSummary)
		}
	}
	if len(us) == 0 {
		return nil
	}
	n := float64(len(us))
	var sent, errs, rcvd, ooo, dup, jitter float64
	for _, u := range us {
		sent += float64(u.PacketsSent) / n
		errs += float64(u.SendErrors) / n
		rcvd += float64(u.PacketsReceived) / n
		ooo += float64(u.OutOfOrder) / n
		dup += float64(u.Duplicates) / n
		jitter += u.JitterMs / n
	}
	m := &UDPSummary{
		PacketsSent:     int64(math.Round(sent)),
		SendErrors:      int64(math.Round(errs)),
		PacketsReceived: int64(math.Round(rcvd)),
		OutOfOrder:      int64(math.Round(ooo)),
		Duplicates:      int64(math.Round(dup)),
		JitterMs:        jitter,
	}
	m.Lost = m.PacketsSent - m.PacketsReceived
	m.LossPct = 100 * Ratio(float64(m.Lost), float64(m.PacketsSent))
	return m
}

// meanRR is the mean of the summaries' transaction figures, nil when none
// has them. Each latency figure is the mean of the iterations' (the
// histograms themselves are not kept); Count is their sum.
func meanRR(ss []Summary) *RRSummary {
	var rs []*RRSummary
	for _, s := range ss {
		if s.RRSummary != nil {
			rs = append(rs, s.RRSummary)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	n := float64(len(rs))
	var tr, tps, to, ct, st float64
	var l stats.Latency
	for _, r := range rs {
		tr += float64(r.Transactions) / n
		tps += r.TransactionsPerSecond / n
		to += float64(r.Timeouts) / n
		ct += float64(r.ClientTransactions) / n
		st += float64(r.ServerTransactions) / n
		l.Count += r.Latency.Count
		l.Min += r.Latency.Min / n
		l.Mean += r.Latency.Mean / n
		l.P50 += r.Latency.P50 / n
		l.P90 += r.Latency.P90 / n
		l.P99 += r.Latency.P99 / n
		l.P999 += r.Latency.P999 / n
		l.Max += r.Latency.Max / n
		l.StdDev += r.Latency.StdDev / n
	}
	return &RRSummary{
		Transactions:          int64(math.Round(tr)),
		TransactionsPerSecond: tps,
		Timeouts:              int64(math.Round(to)),
		Latency:               l,
		ClientTransactions:    int64(math.Round(ct)),
		ServerTransactions:    int64(math.Round(st)),
	}
}

// MeanCPU is the field-by-field mean of CPU figures, nil for none. The
// CPU count and the busiest CPU's number are the last one's; per-CPU
// figures are averaged when every entry lists the same CPUs, and the
// last one's otherwise. The idle baseline is the last one's: iterations
// on one connection share the session's.
func MeanCPU(cs []measure.CPU) *measure.CPU {
	if len(cs) == 0 {
		return nil
	}
	last := cs[len(cs)-1]
	n := float64(len(cs))
	// The processes named are the last iteration's (their figures are
	// that iteration's); the time other processes took is the mean, so
	// the warning about it (report's warning of OthersFigures) holds for iterated runs too.
	m := measure.CPU{CPUs: last.CPUs, BusiestCPU: last.BusiestCPU, PID: last.PID,
		OtherProcesses: append([]measure.TaskCPU(nil), last.OtherProcesses...)}
	if last.Baseline != nil {
		b := *last.Baseline
		m.Baseline = &b
	}
	sameCPUs := true
	for _, c := range cs {
		m.UtilPct += c.UtilPct / n
		m.UserPct += c.UserPct / n
		m.NicePct += c.NicePct / n
		m.SystemPct += c.SystemPct / n
		m.IRQPct += c.IRQPct / n
		m.SoftIRQPct += c.SoftIRQPct / n
		m.IOWaitPct += c.IOWaitPct / n
		m.StealPct += c.StealPct / n
		m.IdlePct += c.IdlePct / n
		m.BusiestCPUPct += c.BusiestCPUPct / n
		m.ProcessUserS += c.ProcessUserS / n
		m.ProcessSystemS += c.ProcessSystemS / n
		m.ElapsedS += c.ElapsedS / n
		m.OtherProcessesUtilPct += c.OtherProcessesUtilPct / n
		m.ServiceDemandMicrosPerKB += c.ServiceDemandMicrosPerKB / n
		m.ServiceDemandMicrosPerTransaction += c.ServiceDemandMicrosPerTransaction / n
		sameCPUs = sameCPUs && slices.Equal(c.PerCPUIDs, last.PerCPUIDs) && len(c.PerCPUUtilPct) == len(last.PerCPUUtilPct)
	}
	m.PerCPUIDs = append([]int{}, last.PerCPUIDs...)
	if sameCPUs {
		m.PerCPUUtilPct = make([]float64, len(last.PerCPUUtilPct))
		for _, c := range cs {
			for i, u := range c.PerCPUUtilPct {
				m.PerCPUUtilPct[i] += u / n
			}
		}
	} else {
		m.PerCPUUtilPct = append([]float64{}, last.PerCPUUtilPct...)
	}
	return &m
}
