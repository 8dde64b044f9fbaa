package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"wirespeed/internal/measure"
	"wirespeed/internal/record"
	"wirespeed/internal/result"
)

// Series is the points of one results document, labelled for a plot or a
// CSV file that puts several documents side by side.
type Series struct {
	Label  string
	Points []result.Point
}

// PointsOf returns a document's points: a sweep's, or the single point of
// a run (at its send size).
func PointsOf(doc result.Document) []result.Point {
	if doc.Kind() == result.KindSweep {
		return doc.Points
	}
	// A run's result; a tradeoff's or a matrix's first, which the
	// document also keeps at its top level.
	if len(doc.Directions) == 0 {
		return nil
	}
	return []result.Point{{MsgSize: doc.Spec.MessageSize(), Result: doc.Result}}
}

// pointsCSVHeader names the columns of a sweep's or matrix's CSV: a
// figure's column is its name in the registry (record.Figures).
var pointsCSVHeader = []string{
	"label", "test", "msg_size", "iterations", record.Throughput.Name, "throughput_lo_bps", "throughput_hi_bps",
	"confidence_level", "achieved_pct", "reached", record.LocalUtil.Name, record.RemoteUtil.Name,
	record.LocalDemand.Name, record.RemoteDemand.Name,
	"send_socket_size", "recv_socket_size", record.Elapsed.Name,
	record.Transactions.Name, record.LatencyP50.Name, record.LatencyP99.Name, record.LatencyP999.Name,
	record.LocalDemandTr.Name, record.RemoteDemandTr.Name,
	"local_process_user_s", "local_process_system_s", "remote_process_user_s", "remote_process_system_s",
	"interrupted", "limit",
	record.SenderWirePPS.Name, record.SenderWireBytesPerPacket.Name,
	record.SenderWireFramesPerSecond.Name, record.SenderWireBytesPerFrame.Name,
}

// PointsCSV writes one row per point of each series: the mean figures,
// the confidence interval (empty cells where there is none) and the CPU.
func PointsCSV(w io.Writer, series []Series) error {
	cw := csv.NewWriter(w)
	cw.Write(pointsCSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	for _, s := range series {
		for _, p := range s.Points {
			sum := p.Summary
			iters, lo, hi, level, achieved, reached := "1", "", "", "", "", ""
			if c := sum.Confidence; c != nil {
				iters = strconv.Itoa(c.Iterations)
				lo, hi, level, achieved = opt(c.Lo), opt(c.Hi), f(c.Level), opt(c.AchievedPct)
				reached = strconv.FormatBool(c.Reached)
			}
			// CPU: utilization and service demand (per KB for streams,
			// per transaction for request/response tests, as the
			// sweep's table shows them), and the tool's own CPU time.
			rr := sum.RRSummary != nil
			cpu := func(c *measure.CPU) (util, perKB, perTr, user, sys string) {
				if c == nil {
					return
				}
				user, sys = f(c.ProcessUserS), f(c.ProcessSystemS)
				if c.CPUs == 0 {
					return
				}
				util = f(c.UtilPct)
				if rr {
					perTr = f(c.ServiceDemandMicrosPerTransaction)
				} else {
					perKB = f(c.ServiceDemandMicrosPerKB)
				}
				return
			}
			lu, lsd, lsdTr, lpu, lps := cpu(sum.LocalCPU)
			ru, rsd, rsdTr, rpu, rps := cpu(sum.RemoteCPU)
			snd, rcv := "", ""
			if len(p.Directions) > 0 {
				if a, b, _ := socketSizes(p.Result, p.Directions[0]); a > 0 || b > 0 {
					snd, rcv = itoaOr(a), itoaOr(b)
				}
			}
			tps, p50, p99, p999 := "", "", "", ""
			if rr {
				l := sum.RRSummary.Latency
				tps, p50, p99, p999 = f(sum.TransactionsPerSecond), f(l.P50), f(l.P99), f(l.P999)
			}
			cw.Write(csvSafe([]string{
				s.Label, string(p.Spec.Kind), strconv.Itoa(p.MsgSize), iters, f(sum.BitsPerSecond), lo, hi,
				level, achieved, reached, lu, ru, lsd, rsd,
				snd, rcv, f(sum.ElapsedS), tps, p50, p99, p999, lsdTr, rsdTr, lpu, lps, rpu, rps,
				strconv.FormatBool(p.Interrupted), limitKind(sum.Limit),
				senderWire(sum.SenderWirePacketsPerSecond), senderWire(sum.SenderWireBytesPerPacket),
				senderWire(sum.SenderWireFramesPerSecond), senderWire(sum.SenderWireBytesPerFrame),
			}))
		}
	}
	cw.Flush()
	return cw.Error()
}
