package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"wirespeed/internal/measure"
	"wirespeed/internal/record"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// JSON writes the document, indented, with a final newline.
func JSON(w io.Writer, doc result.Document) error {
	return result.Encode(w, doc)
}

// csvHeader names the columns of CSV output: the figures the text report
// shows, so a spreadsheet needs nothing else. Columns that do not apply
// to a row (latency on a stream test, CPU of a side not measured) are
// empty, never 0. A figure's column is its name in the registry
// (record.Figures).
var csvHeader = append([]string{
	"test", "direction", "parallel", "send_size", "recv_size",
	"send_socket_size", "recv_socket_size", "socket_size_source", record.Elapsed.Name,
	record.Throughput.Name, record.SenderThroughput.Name, record.Bytes.Name, "sender_bytes",
	record.Retransmits.Name, "congestion_control",
	record.PacketsSent.Name, "packets_received", record.Lost.Name, record.Loss.Name, "out_of_order", "duplicates", record.Jitter.Name, "send_errors",
	"transactions", record.Transactions.Name, record.Timeouts.Name,
	record.LatencyMin.Name, record.LatencyMean.Name, record.LatencyP50.Name, record.LatencyP90.Name, record.LatencyP99.Name,
	record.LatencyP999.Name, record.LatencyMax.Name, "latency_stddev_us",
}, append(append(append(cpuCSVHeader(cpuSides[0]), cpuCSVHeader(cpuSides[1])...), "interrupted", "limit"), wireCSVHeader...)...)

// cpuSide is one side's CPU figures in the registry.
type cpuSide struct {
	name                                           string
	util, user, system, irq, softirq, perKB, perTr record.Figure
}

// cpuSides are each side's CPU figures in the registry: the client's
// (local) and the server's (remote).
var cpuSides = [2]cpuSide{
	{"local", record.LocalUtil, record.LocalUser, record.LocalSystem, record.LocalIRQ, record.LocalSoftIRQ, record.LocalDemand, record.LocalDemandTr},
	{"remote", record.RemoteUtil, record.RemoteUser, record.RemoteSystem, record.RemoteIRQ, record.RemoteSoftIRQ, record.RemoteDemand, record.RemoteDemandTr},
}

// cpuCSVHeader names one side's CPU columns: what the text's cpu line and
// the table's CPU columns show.
func cpuCSVHeader(s cpuSide) []string {
	c := func(col string) string { return s.name + "_" + col }
	return []string{c("cpus"), s.util.Name, s.user.Name, s.system.Name, s.irq.Name, s.softirq.Name, c("idle_pct"),
		c("busiest_cpu"), c("busiest_cpu_pct"), s.perKB.Name, s.perTr.Name,
		c("process_user_s"), c("process_system_s")}
}

// CSV writes one row per direction of each run, and a "both" row for runs
// with two directions. A sweep's document has one row per point instead
// (PointsCSV). CPU is measured per side, not per direction: as in the
// text, a run's CPU columns are on its one direction's row, or on its
// "both" row when it has two.
func CSV(w io.Writer, doc result.Document) error {
	if err := result.CheckFinite(doc); err != nil {
		return fmt.Errorf("the CSV cannot be written: %w", err)
	}
	switch doc.Kind() {
	case result.KindMatrix:
		return PointsCSV(w, MatrixSeries(doc))
	case result.KindSweep:
		return PointsCSV(w, []Series{{Points: doc.Points}})
	}
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	cw.WriteAll(csvSafeAll(runRows(doc)))
	return cw.Error()
}

// runRows are the CSV rows of a run's (or a tradeoff's) document.
func runRows(doc result.Document) [][]string {
	var rows [][]string
	runs := doc.Runs
	if len(runs) == 0 {
		runs = []result.Result{doc.Result}
	}
	for _, r := range runs {
		one := len(r.Directions) == 1
		for _, d := range r.Directions {
			snd, rcv, src := socketSizes(r, d)
			rows = append(rows, csvRow(r, string(d.Direction), d.Summary, []string{itoaOr(snd), itoaOr(rcv), src}, one))
		}
		if !one && len(r.Directions) > 0 {
			rows = append(rows, csvRow(r, "both", r.Summary, []string{"", "", ""}, true))
		}
	}
	return rows
}

func itoaOr(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func csvRow(r result.Result, dir string, s result.Summary, sockets []string, withCPU bool) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	row := []string{string(r.Spec.Kind), dir, strconv.Itoa(r.Spec.Parallel), strconv.Itoa(r.Spec.SendSize), strconv.Itoa(r.Spec.RecvSize)}
	row = append(row, sockets...)
	row = append(row, f(s.ElapsedS), f(s.BitsPerSecond), f(s.SenderBitsPerSecond), i(s.Bytes), i(s.SenderBytes),
		i(s.Retransmits), congestionControl(r))
	if u := s.UDPSummary; u != nil {
		row = append(row, i(u.PacketsSent), i(u.PacketsReceived), i(u.Lost), f(u.LossPct), i(u.OutOfOrder), i(u.Duplicates), f(u.JitterMs), i(u.SendErrors))
	} else {
		row = append(row, make([]string, 8)...)
	}
	if rr := s.RRSummary; rr != nil {
		l := rr.Latency
		row = append(row, i(rr.Transactions), f(rr.TransactionsPerSecond), i(rr.Timeouts),
			f(l.Min), f(l.Mean), f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Max), f(l.StdDev))
	} else {
		row = append(row, make([]string, 11)...)
	}
	for _, c := range []*measure.CPU{r.Summary.LocalCPU, r.Summary.RemoteCPU} {
		row = append(row, cpuCSV(c, withCPU, r.Summary.RRSummary != nil)...)
	}
	row = append(row, strconv.FormatBool(r.Interrupted), limitKind(s.Limit))
	return append(row, wireCSV(r, withCPU)...)
}

// limitKind is a limit's kind for a CSV cell, empty for none.
func limitKind(l *result.Limit) string {
	if l == nil {
		return ""
	}
	return string(l.Kind)
}

// cpuCSV is one side's CPU columns; empty when not measured or not on
// this row. A side that reported only its process's CPU (an iperf3 peer)
// has only the process columns.
func cpuCSV(c *measure.CPU, show, rr bool) []string {
	cells := make([]string, 13)
	if c == nil || !show {
		return cells
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	if c.CPUs > 0 {
		cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6] = strconv.Itoa(c.CPUs), f(c.UtilPct),
			f(c.UserPct), f(c.SystemPct), f(c.IRQPct), f(c.SoftIRQPct), f(c.IdlePct)
		if c.BusiestCPU >= 0 {
			cells[7], cells[8] = strconv.Itoa(c.BusiestCPU), f(c.BusiestCPUPct)
		}
		if rr {
			cells[10] = f(c.ServiceDemandMicrosPerTransaction)
		} else {
			cells[9] = f(c.ServiceDemandMicrosPerKB)
		}
	}
	cells[11], cells[12] = f(c.ProcessUserS), f(c.ProcessSystemS)
	return cells
}

// socketSizes returns the send and receive socket sizes a table row of d
// shows and where they come from: "granted" when the kernel's sizes were
// read back from the stream's sockets (a stream test: the sender's send
// buffer and the receiver's receive buffer; a request/response test: the
// requester's two); for TCP_CRR, which opens a socket per transaction and
// records none, "asked" for -s, or "default" for the sizes a new socket
// starts with (tcp_wmem and tcp_rmem's middle values on this host); 0 and
// "" when nothing says.
func socketSizes(r result.Result, d result.DirectionResult) (snd, rcv int, source string) {
	if len(d.Streams) > 0 {
		st := d.Streams[0]
		snd, rcv = st.Sender.SndBuf, st.Receiver.RcvBuf
		if r.Spec.Kind.RR() {
			snd, rcv = st.Sender.SndBuf, st.Sender.RcvBuf
		}
		if snd > 0 || rcv > 0 {
			return snd, rcv, "granted"
		}
	}
	if r.Spec.Kind != spec.TCPCRR {
		return 0, 0, ""
	}
	if r.Spec.LocalSockBuf > 0 {
		return r.Spec.LocalSockBuf, r.Spec.LocalSockBuf, "asked"
	}
	if env := r.Local.Env; env != nil {
		w, rm := env.Sysctls["net.ipv4.tcp_wmem"], env.Sysctls["net.ipv4.tcp_rmem"]
		if len(w) == 3 && len(rm) == 3 {
			return int(w[1]), int(rm[1]), "default"
		}
	}
	return 0, 0, ""
}

// Formats maps file extensions to what WriteFile writes.
var Formats = map[string]string{".json": "JSON document", ".csv": "CSV", ".txt": "text report"}

// CheckPath returns an error when WriteFile cannot pick a format for path,
// so a command can refuse before it measures anything.
func CheckPath(path string) error {
	if _, ok := Formats[strings.ToLower(filepath.Ext(path))]; !ok {
		return fmt.Errorf("output file %q: use a .json, .csv or .txt name", path)
	}
	return nil
}

// WriteAtomic is result.WriteAtomic, for the files report renders
// (plots, mesh documents).
func WriteAtomic(path string, b []byte) error { return result.WriteAtomic(path, b) }

// congestionControl is the run's TCP congestion control for the CSV: what
// the data sockets reported (the local side's, else the remote's), else
// the spec's --cc.
func congestionControl(r result.Result) string {
	for _, side := range []result.Side{result.Local, result.Remote} {
		if cc := r.CongestionControl(side); cc != "" {
			return cc
		}
	}
	return r.Spec.CongestionControl
}
