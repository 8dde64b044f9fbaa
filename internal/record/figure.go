// Package record owns what a result is on its way out of a run: the one
// registry of its figures (each named once, with its unit, which way is
// better, how to read it from a result and its words for people), the
// one walk over a document that yields each result with a typed
// locator (Each), and the row of indexed columns the archive keeps per
// result (Row). JSON, CSV, --fields, the archive, the exporter, compare
// and history all take a figure's name from here. It has no storage
// and no I/O: the archive, history, report and the dashboard read it
// without linking a database driver.
package record

import (
	"fmt"
	"strings"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// Figure is one figure a result may carry.
type Figure struct {
	// Name is the figure's one spelling: its CSV column, its --fields
	// name, its key in the archive's row, compare's JSON and history's
	// --figure and JSON; the key of the results document too, where the
	// document carries the figure under a key of its own
	// (summary.throughput_bps).
	Name string
	// Unit is the unit of the figure's values, as the name says it:
	// "bits/s", "us", "%", "us/KB".
	Unit string
	// HigherIsBetter says which way is a regression: throughput down,
	// latency, loss, CPU or service demand up.
	HigherIsBetter bool
	// Label is the figure's short word for people, in history's and
	// the dashboard's columns, legends and sentences ("throughput",
	// "p50", "rtt"); history --figure takes it as well as Name. Words
	// name it in a sentence or a heading: "local CPU util".
	Label, Words string
	// Shown is the unit a person reads the figure in, with Scale the
	// factor from Unit to it (10^6bits/sec, 1e-6), where they differ.
	Shown string
	Scale float64
	// In says which of the lists that follow figures holds this one.
	In Use
	// StreamResult marks the result of a stream test, which compare and
	// the exporter give for stream tests only: a request/response
	// test's result is its transaction rate. The archive and history
	// keep it for every test (a request/response test's request and
	// response bits).
	StreamResult bool
	// Metric is the figure's Prometheus metric, where the exporter
	// gives it.
	Metric *Metric
	read   func(View) (float64, bool)
}

// Use is the set of lists a figure is in.
type Use uint8

// The lists.
const (
	// Compared: compare tests its difference between documents.
	Compared Use = 1 << iota
	// Followed: history follows it over time (--figure).
	Followed
	// Pointed: a sweep's or a matrix's CSV has it (one row per point).
	Pointed
)

// Metric is how the exporter names a figure: Prometheus's base units
// (seconds, ratios) with the unit in the name.
type Metric struct {
	Name, Help string
	// Div takes the figure's Unit to the metric's: the metric is the
	// figure divided by it (1e6 for us to seconds).
	Div float64
	// Direction is true for a figure given per direction (a direction
	// label); Labels are the metric's constant label pairs (side,
	// quantile), in the order of LabelNames. Run is true for a figure
	// read from the run's summary (each side's CPU), not from each
	// direction's.
	Direction, Run bool
	LabelNames     []string
	Labels         []string
}

// View is what a figure is read from: a run's (or a direction's, or an
// iteration's) summary, with the intervals and streams it covers.
type View struct {
	Kind      spec.Kind
	Summary   result.Summary
	Intervals []result.Interval
	Streams   []result.Stream
}

// Of is the view of a whole result.
func Of(r *result.Result) View {
	return View{Kind: r.Spec.Kind, Summary: r.Summary, Intervals: r.Intervals, Streams: r.Streams}
}

// OfDirection is the view of one direction of a result of kind k.
func OfDirection(k spec.Kind, d *result.DirectionResult) View {
	return View{Kind: k, Summary: d.Summary, Intervals: d.Intervals, Streams: d.Streams}
}

// OfSummary is the view of a summary alone: an iteration's.
func OfSummary(k spec.Kind, s result.Summary) View { return View{Kind: k, Summary: s} }

// Read is the figure's value in v; false when v has none.
func (f Figure) Read(v View) (float64, bool) { return f.read(v) }

// Is reports whether the figure is in list u.
func (f Figure) Is(u Use) bool { return f.In&u != 0 }

// The figures. Each is read the way every list reads it; where the
// lists disagreed before the registry, docs/results.md ("Changes") says
// which way was kept.
var (
	Throughput = Figure{Name: "throughput_bps", Label: "throughput", Unit: "bits/s", HigherIsBetter: true, Words: "throughput",
		Shown: "10^6bits/sec", Scale: 1e-6, In: Compared | Followed | Pointed, StreamResult: true,
		Metric: &Metric{Name: "wirespeed_probe_throughput_bits_per_second", Div: 1, Direction: true,
			Help: "Payload bits per second the receiver counted over its window: the result of a stream test."},
		read: func(v View) (float64, bool) { return v.Summary.BitsPerSecond, true }}
	SenderThroughput = Figure{Name: "sender_throughput_bps", Unit: "bits/s", HigherIsBetter: true, Words: "sender throughput",
		Metric: &Metric{Name: "wirespeed_probe_sender_throughput_bits_per_second", Div: 1, Direction: true,
			Help: "Payload bits per second the sender counted over its window."},
		read: stream(func(s result.Summary) float64 { return s.SenderBitsPerSecond })}
	Bytes = Figure{Name: "bytes", Unit: "bytes", HigherIsBetter: true, Words: "bytes received",
		Metric: &Metric{Name: "wirespeed_probe_received_bytes", Div: 1, Direction: true,
			Help: "Payload bytes the receiver counted over its window."},
		read: stream(func(s result.Summary) float64 { return float64(s.Bytes) })}
	Elapsed = Figure{Name: "elapsed_s", Unit: "s", HigherIsBetter: true, Words: "window",
		Metric: &Metric{Name: "wirespeed_probe_elapsed_seconds", Div: 1, Direction: true,
			Help: "The receiver's measured window."},
		read: stream(func(s result.Summary) float64 { return s.ElapsedS })}
	Retransmits = Figure{Name: "retransmits", Unit: "segments", Words: "retransmits",
		Metric: &Metric{Name: "wirespeed_probe_tcp_retransmits", Div: 1, Direction: true,
			Help: "TCP segments the sender retransmitted over its window."},
		read: func(v View) (float64, bool) {
			return float64(v.Summary.Retransmits), v.Summary.UDPSummary == nil && tcp(v.Kind)
		}}
	RTT = Figure{Name: "rtt_us", Label: "rtt", Unit: "us", Words: "round-trip time", In: Followed,
		Metric: &Metric{Name: "wirespeed_probe_tcp_rtt_seconds", Div: 1e6, Direction: true,
			Help: "The sending side's smoothed TCP round-trip time (the requester's for TCP_RR): the mean over the intervals of the largest of its streams' at each interval's end; with no intervals, the mean of its streams' at the window's end."},
		read: rtt}
	Transactions = Figure{Name: "transactions_per_s", Unit: "trans/s", HigherIsBetter: true, Words: "transaction rate",
		Shown: "trans/sec", In: Compared | Followed | Pointed,
		Metric: &Metric{Name: "wirespeed_probe_rr_transactions_per_second", Div: 1,
			Help: "Request/response transactions completed per second."},
		read: rr(func(s *result.RRSummary) float64 { return s.TransactionsPerSecond })}
	Timeouts = Figure{Name: "timeouts", Unit: "transactions", Words: "timeouts",
		Metric: &Metric{Name: "wirespeed_probe_rr_timeouts", Div: 1,
			Help: "Request/response transactions given up without an answer."},
		read: rr(func(s *result.RRSummary) float64 { return float64(s.Timeouts) })}
	LatencyMin  = latency("min", "0", func(s *result.RRSummary) float64 { return s.Latency.Min }, 0)
	LatencyP50  = latency("p50", "0.5", func(s *result.RRSummary) float64 { return s.Latency.P50 }, Followed|Pointed)
	LatencyP90  = latency("p90", "0.9", func(s *result.RRSummary) float64 { return s.Latency.P90 }, Followed)
	LatencyP99  = latency("p99", "0.99", func(s *result.RRSummary) float64 { return s.Latency.P99 }, Followed|Pointed)
	LatencyP999 = latency("p999", "0.999", func(s *result.RRSummary) float64 { return s.Latency.P999 }, Pointed)
	LatencyMax  = latency("max", "1", func(s *result.RRSummary) float64 { return s.Latency.Max }, 0)
	LatencyMean = Figure{Name: "latency_mean_us", Unit: "us", Words: "mean latency",
		Metric: &Metric{Name: "wirespeed_probe_rr_latency_mean_seconds", Div: 1e6,
			Help: "Mean request/response latency over the window."},
		read: latencyOf(func(s *result.RRSummary) float64 { return s.Latency.Mean })}
	PacketsSent = Figure{Name: "packets_sent", Unit: "datagrams", HigherIsBetter: true, Words: "datagrams sent",
		Metric: &Metric{Name: "wirespeed_probe_udp_sent_packets", Div: 1, Direction: true,
			Help: "UDP datagrams sent over the receiver's window."},
		read: udp(func(u *result.UDPSummary) float64 { return float64(u.PacketsSent) })}
	Lost = Figure{Name: "lost", Unit: "datagrams", Words: "datagrams lost",
		Metric: &Metric{Name: "wirespeed_probe_udp_lost_packets", Div: 1, Direction: true,
			Help: "UDP datagrams sent over the receiver's window that never arrived."},
		read: udp(func(u *result.UDPSummary) float64 { return float64(u.Lost) })}
	Loss = Figure{Name: "loss_pct", Label: "loss", Unit: "%", Words: "loss", In: Followed,
		Metric: &Metric{Name: "wirespeed_probe_udp_loss_ratio", Div: 100, Direction: true,
			Help: "Lost over sent UDP datagrams, from 0 to 1."},
		read: udp(func(u *result.UDPSummary) float64 { return u.LossPct })}
	Jitter = Figure{Name: "jitter_ms", Unit: "ms", Words: "jitter",
		Metric: &Metric{Name: "wirespeed_probe_udp_jitter_seconds", Div: 1e3, Direction: true,
			Help: "The receiver's RFC 3550 jitter at the window's end."},
		read: udp(func(u *result.UDPSummary) float64 { return u.JitterMs })}

	LocalUtil, RemoteUtil = side2(func(side string) Figure {
		return Figure{Name: side + "_util_pct", Label: side + "_cpu", Unit: "%", Words: side + " CPU util", In: Compared | Followed | Pointed,
			Metric: &Metric{Name: "wirespeed_probe_cpu_utilization_ratio", Div: 100, Run: true, LabelNames: []string{"side"}, Labels: []string{side},
				Help: "A side's CPU utilisation over its window, all CPUs, from 0 to 1."},
			read: cpu(side, false, func(c *measure.CPU) float64 { return c.UtilPct })}
	})
	LocalDemand, RemoteDemand = side2(func(side string) Figure {
		return Figure{Name: side + "_service_demand_us_per_kb", Label: side + "_sd", Unit: "us/KB", Words: side + " service demand", In: Compared | Followed | Pointed,
			Metric: &Metric{Name: "wirespeed_probe_service_demand_seconds_per_byte", Div: 1e6 * 1024, Run: true, LabelNames: []string{"side"}, Labels: []string{side},
				Help: "A side's CPU time, all CPUs, per payload byte moved (netperf's service demand, in seconds per byte rather than us/KB)."},
			read: demand(side, false)}
	})
	LocalDemandTr, RemoteDemandTr = side2(func(side string) Figure {
		return Figure{Name: side + "_service_demand_us_per_tr", Label: side + "_sd_tr", Unit: "us/tr", Words: side + " service demand per transaction", In: Followed | Pointed,
			Metric: &Metric{Name: "wirespeed_probe_service_demand_seconds_per_transaction", Div: 1e6, Run: true, LabelNames: []string{"side"}, Labels: []string{side},
				Help: "A side's CPU time, all CPUs, per request/response transaction."},
			read: demand(side, true)}
	})
	// The sender's device (result.Wire): what TSO, GSO or an MTU made
	// of the packets; absent where the device was not read.
	SenderWirePPS = Figure{Name: "sender_wire_pps", Unit: "pkts/s", Words: "sender device packet rate", Shown: "pkts/sec",
		In: Compared | Pointed,
		read: func(v View) (float64, bool) {
			return v.Summary.SenderWirePacketsPerSecond, v.Summary.SenderWirePacketsPerSecond > 0
		}}
	SenderWireBytesPerPacket = Figure{Name: "sender_wire_bytes_per_packet", Unit: "bytes", HigherIsBetter: true,
		Words: "sender device bytes per packet", In: Compared | Pointed,
		read: func(v View) (float64, bool) {
			return v.Summary.SenderWireBytesPerPacket, v.Summary.SenderWirePacketsPerSecond > 0
		}}
	// The same device's frames: what a physical wire carries, one per
	// segment, where the packets above were the stack's TSO or GSO
	// super-packets (the root qdisc's count, or an estimate from the
	// bytes and the MSS: result.Wire's tx_frames_from); absent where
	// the device was not read and on loopback.
	SenderWireFramesPerSecond = Figure{Name: "sender_wire_frames_per_s", Unit: "frames/s", Words: "sender wire frame rate", Shown: "frames/sec",
		In: Compared | Pointed,
		read: func(v View) (float64, bool) {
			return v.Summary.SenderWireFramesPerSecond, v.Summary.SenderWireFramesPerSecond > 0
		}}
	SenderWireBytesPerFrame = Figure{Name: "sender_wire_bytes_per_frame", Unit: "bytes", HigherIsBetter: true,
		Words: "sender wire bytes per frame", In: Compared | Pointed,
		read: func(v View) (float64, bool) {
			return v.Summary.SenderWireBytesPerFrame, v.Summary.SenderWireFramesPerSecond > 0
		}}
	// Each side's system-wide CPU split (user, system, hardware
	// interrupt, softirq time, in percent of all CPUs), as the run's CPU
	// lines and the tables' second lines show it; a side with only its
	// process's CPU time (an iperf3 peer) has none.
	LocalUser, RemoteUser       = split("user", func(c *measure.CPU) float64 { return c.UserPct }, Compared)
	LocalSystem, RemoteSystem   = split("system", func(c *measure.CPU) float64 { return c.SystemPct }, Compared)
	LocalIRQ, RemoteIRQ         = split("irq", func(c *measure.CPU) float64 { return c.IRQPct }, Compared)
	LocalSoftIRQ, RemoteSoftIRQ = split("softirq", func(c *measure.CPU) float64 { return c.SoftIRQPct }, Compared)
	// Steal is the hypervisor's: compare warns when it moved
	// (comparison's stealWarnings) rather than testing it.
	LocalSteal, RemoteSteal = split("steal", func(c *measure.CPU) float64 { return c.StealPct }, 0)
)

// Figures are every figure, in the order the lists show them.
var Figures = []Figure{
	Throughput, Transactions,
	LocalUtil, RemoteUtil, LocalDemand, RemoteDemand,
	SenderWirePPS, SenderWireBytesPerPacket, SenderWireFramesPerSecond, SenderWireBytesPerFrame,
	LocalUser, LocalSystem, LocalIRQ, LocalSoftIRQ,
	RemoteUser, RemoteSystem, RemoteIRQ, RemoteSoftIRQ,
	LatencyP50, LatencyP90, LatencyP99, RTT, Loss,
	LocalDemandTr, RemoteDemandTr,
	SenderThroughput, Bytes, Elapsed, Retransmits,
	PacketsSent, Lost, Jitter, Timeouts,
	LatencyMin, LatencyP999, LatencyMax, LatencyMean,
	LocalSteal, RemoteSteal,
}

func init() {
	for i := range Figures {
		if Figures[i].Label == "" {
			Figures[i].Label = Figures[i].Name
		}
	}
}

// In lists the figures of list u, in Figures' order.
func In(u Use) []Figure {
	var out []Figure
	for _, f := range Figures {
		if f.Is(u) {
			out = append(out, f)
		}
	}
	return out
}

// Named returns the figure of that name or label; the error lists the
// names of list u.
func Named(name string, u Use) (Figure, error) {
	var names []string
	for _, f := range In(u) {
		if f.Name == name || f.Label == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Figure{}, fmt.Errorf("figure %q: want one of %s", name, strings.Join(names, ", "))
}

func side2(mk func(side string) Figure) (Figure, Figure) { return mk("local"), mk("remote") }

func split(state string, field func(*measure.CPU) float64, in Use) (Figure, Figure) {
	return side2(func(side string) Figure {
		return Figure{Name: side + "_" + state + "_pct", Unit: "% of all CPUs", Words: side + " CPU " + state, In: in,
			read: cpu(side, true, field)}
	})
}

func latency(q, quantile string, field func(*result.RRSummary) float64, in Use) Figure {
	f := Figure{Name: "latency_" + q + "_us", Label: q, Unit: "us", Words: q + " latency", In: in,
		Metric: &Metric{Name: "wirespeed_probe_rr_latency_seconds", Div: 1e6, LabelNames: []string{"quantile"}, Labels: []string{quantile},
			Help: "Request/response latency over the window at a quantile (0 is the minimum, 1 the maximum)."},
		read: latencyOf(field)}
	if q == "p50" || q == "p90" || q == "p99" {
		// An RRUL test's round trips under load (its loaded phase, UDP
		// and TCP probes together) where it has no transactions.
		loaded := map[string]func(result.Latency) float64{
			"p50": func(l result.Latency) float64 { return l.P50Ms },
			"p90": func(l result.Latency) float64 { return l.P90Ms },
			"p99": func(l result.Latency) float64 { return l.P99Ms },
		}[q]
		f.read = func(v View) (float64, bool) {
			if x, ok := latencyOf(field)(v); ok {
				return x, true
			}
			if u := v.Summary.UnderLoad; u != nil && u.Loaded.All.Samples > 0 {
				return 1e3 * loaded(u.Loaded.All), true
			}
			return 0, false
		}
	}
	return f
}

// stream reads a figure of a stream test (not request/response).
func stream(field func(result.Summary) float64) func(View) (float64, bool) {
	return func(v View) (float64, bool) { return field(v.Summary), v.Summary.RRSummary == nil }
}

// rr reads a figure of a request/response test; latency reads one of
// its transaction times, which it has when it completed one.
func rr(field func(*result.RRSummary) float64) func(View) (float64, bool) {
	return func(v View) (float64, bool) {
		if s := v.Summary.RRSummary; s != nil {
			return field(s), true
		}
		return 0, false
	}
}

func latencyOf(field func(*result.RRSummary) float64) func(View) (float64, bool) {
	return func(v View) (float64, bool) {
		if s := v.Summary.RRSummary; s != nil && s.Latency.Count > 0 {
			return field(s), true
		}
		return 0, false
	}
}

func udp(field func(*result.UDPSummary) float64) func(View) (float64, bool) {
	return func(v View) (float64, bool) {
		if u := v.Summary.UDPSummary; u != nil {
			return field(u), true
		}
		return 0, false
	}
}

func cpu(side string, split bool, field func(*measure.CPU) float64) func(View) (float64, bool) {
	return func(v View) (float64, bool) {
		c := v.Summary.LocalCPU
		if side == "remote" {
			c = v.Summary.RemoteCPU
		}
		if c == nil || split && c.CPUs == 0 {
			return 0, false
		}
		return field(c), true
	}
}

// demand is a side's service demand: per KB moved for stream tests,
// per transaction for request/response tests; none where it is 0 (a
// side with no system-wide CPU figures).
func demand(side string, perTr bool) func(View) (float64, bool) {
	return func(v View) (float64, bool) {
		c := v.Summary.LocalCPU
		if side == "remote" {
			c = v.Summary.RemoteCPU
		}
		if c == nil || v.Kind.RR() != perTr {
			return 0, false
		}
		x := c.ServiceDemandMicrosPerKB
		if perTr {
			x = c.ServiceDemandMicrosPerTransaction
		}
		return x, x > 0
	}
}

func tcp(k spec.Kind) bool {
	switch k {
	case spec.TCPStream, spec.TCPMaerts, spec.TCPBidir, spec.TCPRR, spec.TCPCRR:
		return true
	}
	return false
}

// rtt is a TCP test's senders' smoothed round-trip time over the
// window: the mean over the intervals of each interval's (the largest
// of its streams' at the interval's end); with no intervals (-i 0), the
// mean over the sending streams of their RTT at the window's end
// (TCP_INFO read as the window closed).
func rtt(v View) (float64, bool) {
	if !tcp(v.Kind) {
		return 0, false
	}
	var sum float64
	n := 0
	for _, iv := range v.Intervals {
		if iv.RTTMicros > 0 {
			sum += iv.RTTMicros
			n++
		}
	}
	if n > 0 {
		return sum / float64(n), true
	}
	for _, s := range v.Streams {
		if ti := s.Sender.TCPInfo; ti != nil && ti.RTTMicros > 0 {
			sum += ti.RTTMicros
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
