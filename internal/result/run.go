// Package run owns the data of one run: what each side measured (SideResult)
// and the joined result of both sides (Result), with the JSON names the
// results document uses. It is plain data plus the arithmetic that joins
// the two sides; it does no I/O and reads no clock.
package result

import (
	"time"

	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/sysinfo"
)

// Side names who measured a figure: the client process (local) or the
// server (remote).
type Side string

// The two sides.
const (
	Local  Side = "local"
	Remote Side = "remote"
)

// Router names a router on the path where a queue was sampled: a routed
// lab's, whose qdiscs the client samples in an RRUL run (queue.go).
const Router Side = "router"

// Role is what a side does on a stream.
type Role string

// The roles: stream tests have a sender and a receiver; request/response
// tests a requester (the client) and a responder (the server).
const (
	Sender    Role = "sender"
	Receiver  Role = "receiver"
	Requester Role = "requester"
	Responder Role = "responder"
)

// Interval is what was moved between two samples.
type Interval struct {
	StartS        float64 `json:"start_s"` // from the start of the window
	EndS          float64 `json:"end_s"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"throughput_bps"`
	Retransmits   int64   `json:"retransmits"`      // sender's TCP retransmitted segments
	CwndBytes     int64   `json:"cwnd_bytes"`       // sender's congestion window at the end
	RTTMicros     float64 `json:"rtt_us,omitempty"` // sender's smoothed RTT at the end
	// NotsentBytes is what the sender's socket held unsent at the end
	// (TCP_INFO's notsent_bytes), summed over the streams.
	NotsentBytes int64 `json:"notsent_bytes,omitempty"`
	// Packets is datagrams received (UDP_STREAM) or transactions completed
	// (request/response tests) in the interval.
	Packets int64 `json:"packets,omitempty"`
	// Lost is datagrams missing from the sequence in the interval, as the
	// receiver saw it then (a late datagram gives its loss back later).
	Lost int64 `json:"lost,omitempty"`
	// JitterMs is the receiver's RFC 3550 jitter at the interval's end.
	JitterMs float64 `json:"jitter_ms,omitempty"`
	// TransactionsPerSecond is Packets per second for request/response tests.
	TransactionsPerSecond float64 `json:"transactions_per_s,omitempty"`
}

// StreamSide is what one side measured on one stream.
type StreamSide struct {
	ID         int   `json:"id"`
	Side       Side  `json:"side"`
	Role       Role  `json:"role"`
	Bytes      int64 `json:"bytes"`       // moved inside the window
	TotalBytes int64 `json:"total_bytes"` // moved over the connection's life, warm-up and drain included
	Calls      int64 `json:"calls"`       // send or receive system calls inside the window
	// Complete is true when TotalBytes is final: the sender stopped, or the
	// receiver read up to the sender's end of stream.
	Complete          bool             `json:"complete"`
	SndBuf            int              `json:"sndbuf"` // granted by the kernel when the run started, read back after setting
	RcvBuf            int              `json:"rcvbuf"`
	SndBufEnd         int              `json:"sndbuf_end"` // at the end of the window, after the kernel's autotuning
	RcvBufEnd         int              `json:"rcvbuf_end"`
	CongestionControl string           `json:"congestion_control,omitempty"`
	Retransmits       int64            `json:"retransmits"` // over the window
	TCPInfo           *measure.TCPInfo `json:"tcp_info,omitempty"`
	MPTCP             *MPTCPStream     `json:"mptcp,omitempty"` // --mptcp: whether the connection is Multipath TCP (mptcp.go)
	Intervals         []Interval       `json:"intervals,omitempty"`

	// AckedBytes is, on a TCP stream's sender, the payload its peer
	// acknowledged over the window (the change of TCP_INFO's
	// bytes_acked): what left, where Bytes is what the program wrote,
	// the bytes the socket still held unsent at the window's end
	// included. ReceivedBytes is, on a TCP stream's receiver, the
	// payload its kernel received in sequence over the window
	// (bytes_received's change), read by the program or not. Absent
	// where the kernel has no such counts (before Linux 4.1) and in
	// documents written before they were kept.
	AckedBytes    *int64 `json:"acked_bytes,omitempty"`
	ReceivedBytes *int64 `json:"kernel_received_bytes,omitempty"`

	// UDP and request/response figures, over the window.
	Packets      int64          `json:"packets,omitempty"`       // datagrams sent or received (distinct), or transactions
	TotalPackets int64          `json:"total_packets,omitempty"` // the same over the connection's life
	SendErrors   int64          `json:"send_errors,omitempty"`   // sends the kernel refused (EAGAIN, ENOBUFS), retried
	Lost         int64          `json:"lost,omitempty"`          // sequence gaps seen by the receiver in the window
	OutOfOrder   int64          `json:"out_of_order,omitempty"`
	Duplicates   int64          `json:"duplicates,omitempty"`
	JitterMs     float64        `json:"jitter_ms,omitempty"`
	Timeouts     int64          `json:"timeouts,omitempty"` // transactions given up without an answer
	Latency      *stats.Latency `json:"latency_us,omitempty"`
	// UDP sequence accounting. A sender's SeqFirst is its next sequence
	// number when its window opened; a receiver's is the first it counted
	// as the window's, and SeqUnique how many distinct datagrams numbered
	// SeqFirst or later arrived, late ones included.
	SeqFirst  uint64 `json:"seq_first,omitempty"`
	SeqUnique int64  `json:"seq_unique,omitempty"`
	// DataPath is this side's record of the stream's data path options.
	DataPath *StreamDataPath `json:"datapath,omitempty"`

	// TCPLimited is the change of TCP_INFO's busy and limited times
	// over the window (a sender's, Linux 4.9 and later).
	TCPLimited *TCPLimited `json:"tcp_limited,omitempty"`
}

// Flow is what one side measured for one direction: the streams it sent
// or received, counted over one window.
type Flow struct {
	Direction spec.Direction `json:"direction"`
	Side      Side           `json:"side"`
	Role      Role           `json:"role"`
	// StartOffsetS is when the window opened, from when this side began
	// the run; a receiver's window opens at its first byte plus the omit.
	StartOffsetS float64 `json:"start_offset_s"`
	ElapsedS     float64 `json:"elapsed_s"` // measured length of the window
	Bytes        int64   `json:"bytes"`
	// Truncated is set when the window closed before its planned end: an
	// interrupt, an error, or the sender's end of stream.
	Truncated bool         `json:"truncated,omitempty"`
	Intervals []Interval   `json:"intervals"`
	Streams   []StreamSide `json:"streams"`
	// Latency merges the streams' latencies (requester only).
	Latency *stats.Latency `json:"latency_us,omitempty"`
}

// SideResult is everything one side measured in one run.
type SideResult struct {
	Side        Side   `json:"side"`
	Hostname    string `json:"hostname,omitempty"`
	Flows       []Flow `json:"flows"`
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
	// Counters is how the host's protocol counters changed from the first
	// window's opening to the last one's closing.
	Counters *measure.Counters `json:"counters,omitempty"`
	// Wire is how the counters of the device that carried the test
	// changed over the same span (endpoint.Config.WireDevice); Join derives
	// the figures of SideInfo.Wire from it.
	Wire     *netdev.Wire `json:"wire,omitempty"`
	Warnings []string     `json:"warnings,omitempty"`
	// DataPath is what this side did about the spec's data path options
	// (datapath.go), present when the spec asks for any.
	DataPath *DataPath `json:"datapath,omitempty"`
	// CPU is this side's CPU over its measurement window when the spec
	// asks for it; CPUError says why it is missing when sampling failed.
	// Its service demand is filled in by Join, from the test's bytes.
	CPU      *measure.CPU `json:"cpu,omitempty"`
	CPUError string       `json:"cpu_error,omitempty"`
	// Env is this side's environment record (see env.go): collected once
	// per control session and again after a setting changed, not per run.
	Env *sysinfo.Env `json:"env,omitempty"`
	// Probes are an RRUL test's probes, on the client's side
	// (underload.go).
	Probes *ProbeRecord `json:"probes,omitempty"`
	// Queue is this side's egress qdisc sampled over an RRUL run
	// (queue.go).
	Queue *QueueRecord `json:"queue,omitempty"`
	// RouterQueues are the egress qdiscs of a routed lab's router,
	// sampled by the client when it runs in one of the lab's hosts.
	RouterQueues []QueueRecord `json:"router_queues,omitempty"`
	// LoadSeconds are the bytes this side's receiving flows got in each
	// step of an RRUL load, on this side's clock (underload.go).
	LoadSeconds *LoadSeconds `json:"load_seconds,omitempty"`
}

// IntervalReport is one side's sample of one direction, sent as it
// happens so the client can show interval lines while the test runs.
type IntervalReport struct {
	Direction spec.Direction   `json:"direction"`
	Side      Side             `json:"side"`
	Role      Role             `json:"role"`
	Index     int              `json:"index"`
	Interval  Interval         `json:"interval"` // the sum over the flow's streams
	Streams   []StreamInterval `json:"streams"`
}

// StreamInterval is one stream's share of an interval.
type StreamInterval struct {
	ID int `json:"id"`
	Interval
}

// Summary is the headline of a run or of one direction.
type Summary struct {
	// BitsPerSecond is payload bits per second counted by the receiver over
	// its window: the result of a stream test.
	BitsPerSecond       float64 `json:"throughput_bps"`
	SenderBitsPerSecond float64 `json:"sender_throughput_bps"`
	Bytes               int64   `json:"bytes"` // received inside the window
	SenderBytes         int64   `json:"sender_bytes"`
	ElapsedS            float64 `json:"elapsed_s"` // receiver's window
	SenderElapsedS      float64 `json:"sender_elapsed_s"`
	Retransmits         int64   `json:"retransmits"`
	// LocalCPU and RemoteCPU are each side's CPU over its window, in the
	// summary of a run (not of a direction or a stream) when the spec
	// asks for CPU.
	LocalCPU  *measure.CPU `json:"local_cpu,omitempty"`
	RemoteCPU *measure.CPU `json:"remote_cpu,omitempty"`
	// Confidence is the confidence interval over iterations, when the
	// result is the mean of several (see points.go).
	Confidence *Confidence `json:"confidence,omitempty"`
	// Limit is what limited the result (package limit, docs/limits.md).
	Limit *Limit `json:"limit,omitempty"`
	// SenderWirePacketsPerSecond and SenderWireBytesPerPacket are the
	// sending side's device's tx packets per second and mean bytes per
	// packet (Wire), in the summary of a run; 0 where not read. The
	// client's device for a test with two directions or a
	// request/response test.
	SenderWirePacketsPerSecond float64 `json:"sender_wire_pps,omitempty"`
	SenderWireBytesPerPacket   float64 `json:"sender_wire_bytes_per_packet,omitempty"`
	// SenderWireFramesPerSecond and SenderWireBytesPerFrame are the
	// same device's frames (Wire's TxFramesPerSecond and
	// TxBytesPerFrame): what a physical wire carries, where the packets
	// above were TSO or GSO super-packets; 0 where not read and on
	// loopback.
	SenderWireFramesPerSecond float64 `json:"sender_wire_frames_per_s,omitempty"`
	SenderWireBytesPerFrame   float64 `json:"sender_wire_bytes_per_frame,omitempty"`
	// Present for UDP_STREAM and for request/response tests only.
	*UDPSummary
	*RRSummary
	// UnderLoad is an RRUL test's answer (underload.go).
	UnderLoad *UnderLoad `json:"under_load,omitempty"`
}

// UDPSummary is what a UDP_STREAM's two sides counted. The datagrams
// counted are the sender's from the first one of the receiver's window
// to its last: PacketsSent of them were sent and PacketsReceived arrived
// (late ones included), so Lost = PacketsSent - PacketsReceived exactly.
type UDPSummary struct {
	PacketsSent     int64   `json:"packets_sent"`
	SendErrors      int64   `json:"send_errors"`
	PacketsReceived int64   `json:"packets_received"`
	Lost            int64   `json:"lost"`
	LossPct         float64 `json:"loss_pct"`
	OutOfOrder      int64   `json:"out_of_order"`
	Duplicates      int64   `json:"duplicates"`
	JitterMs        float64 `json:"jitter_ms"`
}

// RRSummary is what a request/response test's client measured.
type RRSummary struct {
	Transactions          int64         `json:"transactions"`
	TransactionsPerSecond float64       `json:"transactions_per_s"`
	Timeouts              int64         `json:"timeouts"`
	Latency               stats.Latency `json:"latency_us"`
	// ServerTransactions is how many requests the server answered over
	// the whole run, for comparison with the client's count.
	ServerTransactions int64 `json:"server_transactions"`
	ClientTransactions int64 `json:"client_transactions"` // over the whole run
}

// Stream joins both sides' view of one data connection.
type Stream struct {
	ID        int            `json:"id"`
	Direction spec.Direction `json:"direction"`
	Sender    StreamSide     `json:"sender"`
	Receiver  StreamSide     `json:"receiver"`
	Summary   Summary        `json:"summary"`
}

// DirectionResult joins the sender's and receiver's flows of one direction.
type DirectionResult struct {
	Direction spec.Direction `json:"direction"`
	Sender    Side           `json:"sender"`
	Receiver  Side           `json:"receiver"`
	Summary   Summary        `json:"summary"`
	Intervals []Interval     `json:"intervals"`
	Streams   []Stream       `json:"streams"`
	// Amount is the fixed amount (-n, -k) of the direction, reached when
	// its receiver got all of it.
	Amount *Amount `json:"amount,omitempty"`
}

// Amount is a fixed amount a direction moves (-n, -k) instead of running
// for a time: the bytes asked for over all its streams, and whether they
// were all moved before the length (-l) ran out.
type Amount struct {
	Bytes   int64 `json:"bytes"`
	Reached bool  `json:"reached"`
}

// Result is one run, joined from both sides.
type Result struct {
	Spec        spec.Test         `json:"spec"`
	Started     time.Time         `json:"started"`
	Interrupted bool              `json:"interrupted"`
	Summary     Summary           `json:"summary"`
	Intervals   []Interval        `json:"intervals"`
	Directions  []DirectionResult `json:"directions"`
	Streams     []Stream          `json:"streams"`
	Local       SideInfo          `json:"local"`
	Remote      SideInfo          `json:"remote"`
	Warnings    []Warning         `json:"warnings,omitempty"`
	// Iterations holds every iteration's own figures when the result is
	// the mean of several runs (see points.go).
	Iterations []Iteration `json:"iterations,omitempty"`
}

// SideInfo describes a side of a result.
type SideInfo struct {
	Hostname string `json:"hostname,omitempty"`
	Address  string `json:"address,omitempty"`
	// Counters is how the side's kernel protocol counters (/proc/net/snmp,
	// /proc/net/netstat) changed over its window; they count all traffic
	// of its network namespace, not only the test's.
	Counters *measure.Counters `json:"counters,omitempty"`
	// Wire is what the side's device carried over its window, with the
	// figures derived from it (wire.go); absent where it was not read.
	Wire *Wire `json:"wire,omitempty"`
	// Env is the side's environment: kernel, CPU, the interface that
	// carried the test with its MTU, driver, offloads and qdisc, TCP
	// congestion control and sysctls.
	Env *sysinfo.Env `json:"env,omitempty"`
	// DataPath is what the side did about the spec's data path options.
	DataPath *DataPath `json:"datapath,omitempty"`
}

// Tick is one interval of one direction, joined from its receiver's report
// (bytes, rate) and its sender's (retransmits, congestion window), for
// showing while a test runs.
type Tick struct {
	Direction spec.Direction   `json:"direction"`
	Index     int              `json:"index"`
	Interval  Interval         `json:"interval"`
	Streams   []StreamInterval `json:"streams"`
	// Probes are an RRUL run's probe round trips answered within the
	// interval, for its live line; not in the JSON (the probe record
	// and load_intervals hold them).
	Probes *Latency `json:"-"`
}

// JoinTick joins a receiver's and a sender's report of the same interval;
// snd may be nil when the sender's is missing.
func JoinTick(rcv IntervalReport, snd *IntervalReport) Tick {
	t := Tick{Direction: rcv.Direction, Index: rcv.Index, Interval: rcv.Interval}
	t.Streams = append([]StreamInterval(nil), rcv.Streams...)
	if snd == nil {
		return t
	}
	t.Interval.Retransmits = snd.Interval.Retransmits
	t.Interval.CwndBytes = snd.Interval.CwndBytes
	t.Interval.RTTMicros = snd.Interval.RTTMicros
	byID := map[int]Interval{}
	for _, s := range snd.Streams {
		byID[s.ID] = s.Interval
	}
	for i := range t.Streams {
		if s, ok := byID[t.Streams[i].ID]; ok {
			t.Streams[i].Retransmits = s.Retransmits
			t.Streams[i].CwndBytes = s.CwndBytes
			t.Streams[i].RTTMicros = s.RTTMicros
		}
	}
	return t
}

// Schema names the results document format and its version. A change that
// removes or renames a field bumps the version; adding fields does not.
const Schema = "wirespeed/result/v1"

// Tool identifies the program that wrote a document.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Document is the results document: one run's result at the top level,
// and every run of the command under Runs when there was more than one
// (--tradeoff runs TCP_STREAM then TCP_MAERTS).
type Document struct {
	Schema  string `json:"schema"`
	Tool    Tool   `json:"tool"`
	Command string `json:"command"`
	// Title and Labels are what the user said about the run (--title,
	// --label KEY=VALUE): "before the patch", kernel=6.18 patched.
	// compare and plot tell documents apart by them as by any setting.
	Title  string            `json:"title,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Result
	Runs []Result `json:"runs,omitempty"`
	// Tradeoff is --tradeoff's answer: the second direction's throughput
	// over the first's, tested when both iterated.
	Tradeoff *Tradeoff `json:"tradeoff,omitempty"`
	// Repeat is the iterations and confidence asked, when the command
	// repeated its runs; Sizes and Points are a sweep's (see points.go).
	Repeat *spec.Repeat `json:"repeat,omitempty"`
	Sizes  []int        `json:"sizes,omitempty"`
	Points []Point      `json:"points,omitempty"`
	// Matrix is a matrix's settings and rows (see matrix.go).
	Matrix *Matrix `json:"matrix,omitempty"`
}

// Tradeoff compares the two directions of a --tradeoff run: Runs[1]
// (TCP_MAERTS) against Runs[0] (TCP_STREAM).
type Tradeoff struct {
	// Ratio is Runs[1]'s throughput over Runs[0]'s (their means when
	// they iterated).
	Ratio float64 `json:"ratio"`
	// Test is the two-sample test of the two directions' iteration
	// throughputs, as compare makes it (Mann-Whitney U at alpha 0.05);
	// nil when a direction did not iterate (-I), or the test could not be
	// made (TestError says why).
	Test      *TradeoffTest `json:"test,omitempty"`
	TestError string        `json:"test_error,omitempty"`
}

// TradeoffTest is the significance test of a Tradeoff.
type TradeoffTest struct {
	Test stats.Test `json:"test"`
	// NA and NB are how many iterations of each direction were tested.
	NA int `json:"n_a"`
	NB int `json:"n_b"`
	// P is the two-sided p-value; Significant is P <= Alpha.
	P           float64  `json:"p"`
	Alpha       float64  `json:"alpha"`
	Significant bool     `json:"significant"`
	Warnings    []string `json:"warnings,omitempty"`
}
