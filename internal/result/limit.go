package result

import "wirespeed/internal/measure"

// Limit says what held a result to the figure it has, with the figures
// that show it. Package limit decides it from the rest of the result (see
// docs/limits.md); it is in the summary of every stream and
// request/response result, in each direction's summary, and in the run's.
type Limit struct {
	Kind LimitKind `json:"kind"`
	// Side is the side whose resource was the limit: the sender's or
	// receiver's CPU, the receiver's window, the sender's buffer, the
	// host whose other processes took the CPU. Empty for the kinds that
	// are not a side's (link, congestion, unknown).
	Side     Side          `json:"side,omitempty"`
	Evidence LimitEvidence `json:"evidence"`
	// Notes say what could not be told and what else was close: the
	// reason for unknown, another process busy beside a CPU limit.
	Notes []Warning `json:"notes,omitempty"`
	// Also names a second limit as strongly in evidence as Kind, which
	// was judged the main one: a receive window the user fixed, full
	// most of the window, with the receiver's CPU near saturation beside
	// it. A note says what showed it.
	Also []LimitKind `json:"also,omitempty"`
}

// LimitKind names what limited a result.
type LimitKind string

// The kinds of limit. Stream tests use the first nine; request/response
// tests the CPU kinds under their own names, latency, other_processes
// and unknown.
const (
	LimitLink           LimitKind = "link"            // a qdisc's rate or the interface speed on the route
	LimitSenderCPU      LimitKind = "sender_cpu"      // the CPU running the sender's data path, or its softirq
	LimitReceiverCPU    LimitKind = "receiver_cpu"    // the same on the receiver
	LimitReceiveWindow  LimitKind = "receive_window"  // TCP_INFO's rwnd_limited time
	LimitSendBuffer     LimitKind = "send_buffer"     // TCP_INFO's sndbuf_limited time
	LimitCongestion     LimitKind = "congestion"      // loss and retransmissions holding the window down
	LimitRateCap        LimitKind = "rate_cap"        // -b or --fq-rate reached
	LimitOtherProcesses LimitKind = "other_processes" // CPU taken by processes other than wirespeed
	LimitUnknown        LimitKind = "unknown"
	// Request/response tests.
	LimitRequesterCPU LimitKind = "requester_cpu" // the client's CPU
	LimitResponderCPU LimitKind = "responder_cpu" // the server's CPU
	LimitLatency      LimitKind = "latency"       // each transaction waited on the round trip, no CPU saturated
)

// LimitEvidence is the figures behind a limit, each part present when it
// was looked at.
type LimitEvidence struct {
	Rate   *LimitRate   `json:"rate,omitempty"`
	CPU    *LimitCPU    `json:"cpu,omitempty"`
	TCP    *LimitTCP    `json:"tcp,omitempty"`
	Others *LimitOthers `json:"other_processes,omitempty"`
	RTT    *LimitRTT    `json:"rtt,omitempty"`
}

// LimitRate compares the goodput with a rate on the route or a cap.
type LimitRate struct {
	// Source is what set the rate: "qdisc" (a root qdisc's rate, Qdisc
	// names its kind), "interface_speed", "rate" (-b) or "fq_rate".
	Source    string `json:"source"`
	Interface string `json:"interface,omitempty"`
	Qdisc     string `json:"qdisc,omitempty"`
	Side      Side   `json:"side,omitempty"` // whose interface
	// BitsPerSecond is the rate as set (on the wire for a link, payload
	// for -b); AllowedBitsPerSecond the payload rate it allows after
	// headers; GoodputPct the goodput in percent of that.
	BitsPerSecond        float64 `json:"rate_bps"`
	AllowedBitsPerSecond float64 `json:"allowed_bps"`
	GoodputPct           float64 `json:"goodput_pct"`
}

// LimitCPU is the CPU of the side a limit names.
type LimitCPU struct {
	CPU        int     `json:"cpu"` // the kernel's number of the busiest CPU
	UtilPct    float64 `json:"util_pct"`
	UserPct    float64 `json:"user_pct"`
	SystemPct  float64 `json:"system_pct"`
	SoftIRQPct float64 `json:"softirq_pct"`
	IRQPct     float64 `json:"irq_pct,omitempty"`
	StealPct   float64 `json:"steal_pct,omitempty"`
	// ThreadPct is the busiest wirespeed thread of that side, in percent
	// of one CPU; ThreadID its kernel thread id.
	ThreadPct float64 `json:"thread_pct"`
	ThreadID  int     `json:"thread_id,omitempty"`
	// ThreadWaitPct is the time that thread waited runnable for a CPU,
	// in percent of the window.
	ThreadWaitPct float64 `json:"thread_wait_pct,omitempty"`
}

// LimitTCP is the sender's TCP_INFO over the window, all streams.
type LimitTCP struct {
	// Percent of the window: TCP_INFO's tcpi_rwnd_limited,
	// tcpi_sndbuf_limited and tcpi_busy_time, each stream's over its
	// window, the largest stream's.
	RwndLimitedPct   float64 `json:"rwnd_limited_pct"`
	SndbufLimitedPct float64 `json:"sndbuf_limited_pct"`
	BusyPct          float64 `json:"busy_pct"`
	// RetransPct is retransmitted segments in percent of the segments the
	// window's bytes make at the sender's MSS.
	Retransmits int64   `json:"retransmits"`
	RetransPct  float64 `json:"retrans_pct"`
	// RcvBuf and SndBuf are the receiver's and sender's buffers at the
	// window's end, the smallest stream's.
	RcvBufBytes int `json:"rcvbuf_bytes,omitempty"`
	SndBufBytes int `json:"sndbuf_bytes,omitempty"`
	// InFlightPct is what a stream had in flight, its goodput times its
	// smoothed round trip, in percent of its receive buffer at the end:
	// near 100 the window the buffer allows is what holds the rate
	// whatever rwnd_limited says (the largest stream's).
	InFlightPct float64 `json:"in_flight_pct,omitempty"`
}

// LimitOthers is the CPU that processes other than the test's took on a
// side's host over its window.
type LimitOthers struct {
	Side Side `json:"side"`
	// UtilPct is their CPU time in percent of one CPU (200 is two CPUs'
	// worth), and HostPct in percent of all the host's.
	UtilPct float64 `json:"util_pct"`
	HostPct float64 `json:"host_pct"`
	// Busiest is the processes that took the most, busiest first (at
	// most three).
	Busiest []measure.TaskCPU `json:"busiest,omitempty"`
}

// LimitRTT is a request/response test's latency against its rate.
type LimitRTT struct {
	// MeanMicros is the mean transaction latency; InFlight the
	// transactions in flight (streams times burst); PredictedPerSecond
	// is InFlight/mean latency, what the latency alone allows, and
	// AchievedPct the transaction rate in percent of it.
	MeanMicros         float64 `json:"mean_us"`
	InFlight           int     `json:"in_flight"`
	PredictedPerSecond float64 `json:"predicted_per_s"`
	AchievedPct        float64 `json:"achieved_pct"`
	BusyPollMicros     int     `json:"busy_poll_us,omitempty"`
}

// TCPLimited is what a TCP sender's TCP_INFO says about its window,
// summed over the window (Linux 4.9 and later; all 0 before): how long
// it had data to send (busy) and, of that, how long the receive window or
// the send buffer held it back.
type TCPLimited struct {
	BusyMicros          int64 `json:"busy_us"`
	RwndLimitedMicros   int64 `json:"rwnd_limited_us"`
	SndbufLimitedMicros int64 `json:"sndbuf_limited_us"`
}
