// Package spec owns what to run: the test kind, message and socket sizes,
// duration, warm-up, interval, parallelism and the stream plan derived from
// them. A Test is plain data, filled with defaults by Default and checked
// by Validate; nothing below the CLI reads flags, everything reads a Test.
package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Kind names a test, following netperf.
type Kind string

// The test kinds.
const (
	TCPStream Kind = "TCP_STREAM" // client sends, server receives
	TCPMaerts Kind = "TCP_MAERTS" // server sends, client receives
	TCPBidir  Kind = "TCP_BIDIR"  // both at once
	UDPStream Kind = "UDP_STREAM" // datagrams, client to server (server to client with Reverse)
	TCPRR     Kind = "TCP_RR"     // request/response transactions on one connection
	UDPRR     Kind = "UDP_RR"     // request/response datagrams
	TCPCRR    Kind = "TCP_CRR"    // a new connection for every transaction
	RRUL      Kind = "RRUL"       // latency under load: TCP flows both ways with probes (rrul.go)
)

// Kinds lists every kind this version runs, in the order help shows them.
var Kinds = []Kind{TCPStream, TCPMaerts, TCPBidir, UDPStream, TCPRR, UDPRR, TCPCRR, RRUL}

// UDP reports whether the kind moves datagrams.
func (k Kind) UDP() bool { return k == UDPStream || k == UDPRR }

// RR reports whether the kind is a request/response test.
func (k Kind) RR() bool { return k == TCPRR || k == UDPRR || k == TCPCRR }

// ParseKind matches s against the known kinds, ignoring case.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if strings.EqualFold(s, string(k)) {
			return k, nil
		}
	}
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("unknown test %q: use one of %s", s, strings.Join(names, ", "))
}

// Direction is the way payload flows on a stream.
type Direction string

// The directions, named from the client's point of view. A
// request/response test has one "direction" of its own: the client asks,
// the server answers.
const (
	ClientToServer  Direction = "client_to_server"
	ServerToClient  Direction = "server_to_client"
	RequestResponse Direction = "request_response"
)

// Directions returns the directions t moves data in, client to server
// first.
func (t Test) Directions() []Direction {
	switch t.Kind {
	case TCPStream:
		return []Direction{ClientToServer}
	case TCPMaerts:
		return []Direction{ServerToClient}
	case TCPBidir:
		return []Direction{ClientToServer, ServerToClient}
	case UDPStream:
		if t.Reverse {
			return []Direction{ServerToClient}
		}
		return []Direction{ClientToServer}
	case TCPRR, UDPRR, TCPCRR:
		return []Direction{RequestResponse}
	case RRUL:
		return t.rrulDirections()
	}
	return nil
}

// Payload says what the sender puts in its messages.
type Payload struct {
	// Kind is "random" (incompressible bytes generated once), "hot"
	// (random bytes in a ring small enough to stay in the first-level
	// cache, which repeat within a compressor's window), "zeros" or
	// "file" (the contents of Path, repeated).
	Kind string `json:"kind"`
	Path string `json:"path,omitempty"`
}

// Payload kinds.
const (
	PayloadRandom = "random"
	PayloadHot    = "hot"
	PayloadZeros  = "zeros"
	PayloadFile   = "file"
)

// Test is one measurement to run. Sizes are bytes; zero socket buffer sizes
// mean "leave the system default".
type Test struct {
	Kind     Kind
	Duration time.Duration // length of the measurement window
	Omit     time.Duration // warm-up before the window, left out of the result
	Interval time.Duration // interval report period; 0 for none

	SendSize      int // bytes per send call (-m)
	RecvSize      int // bytes per receive call (-M)
	LocalSockBuf  int // SO_SNDBUF and SO_RCVBUF asked for on the client's data sockets (-s)
	RemoteSockBuf int // the same on the server's data sockets (-S)

	// Reverse makes the server send, for the kinds whose name does not say
	// the direction (UDP_STREAM).
	Reverse bool

	// RateBitsPerSecond paces each stream's sender (UDP_STREAM and the TCP
	// stream tests) to this many bits of payload per second (-b); 0 sends
	// as fast as possible.
	RateBitsPerSecond float64
	RequestSize       int // request/response tests: bytes per request (-r)
	ResponseSize      int // and per response
	Burst             int // request/response transactions in flight per connection (--burst)

	Parallel          int    // streams per direction (-P)
	CongestionControl string // TCP_CONGESTION on every data socket; "" for the system default
	NoDelay           bool   // TCP_NODELAY on every data socket
	IPVersion         int    // 0 for either, 4 or 6

	Payload Payload

	// CPU asks both sides to measure CPU utilization over their window
	// (--cpu).
	CPU bool

	// Data path options (see datapath.go): they change what is measured,
	// so every one of them is recorded with the result.
	LocalCPUs  CPUList // -T: CPUs the client's data-path threads are pinned to; "" for none
	RemoteCPUs CPUList // -T: the same on the server
	ZeroCopy   string  // --zerocopy: how TCP senders hand payload to the kernel: copy ("" too), sendfile or msg
	Rx         string  // --rx: how TCP receivers take it: copy ("" too), splice or discard
	// FQRateBitsPerSecond caps every stream's sender with
	// SO_MAX_PACING_RATE (--fq-rate, bits/s; the kernel takes bytes/s); 0
	// for no cap.
	FQRateBitsPerSecond float64
	BusyPollMicros      int  // --busy-poll: SO_BUSY_POLL on request/response sockets, microseconds; 0 for none
	GSOSize             int  // --gso: UDP_STREAM datagram size the sender's kernel segments each send into (UDP_SEGMENT); 0 for none
	GRO                 bool // --gro: UDP_GRO on the UDP_STREAM receiver

	// UDP batches: how many datagrams one system call moves.
	// 0 and 1 both mean one send(2) per datagram, as netperf's -m means,
	// and one receive call per datagram, as netperf and iperf3 receive.
	SendBatch int // --send-batch: sends per sendmmsg(2) call of UDP_STREAM senders
	RecvBatch int // --recv-batch: datagrams per recvmmsg(2) call of UDP_STREAM receivers
	// RxTimestamp is how a UDP_STREAM receiver times each datagram's
	// arrival for the jitter (--rx-timestamp): RxTimestampClock or
	// RxTimestampKernel; "" is kernel, as before the choice existed.
	RxTimestamp string
	// Socket options (see sockopts.go). BindAddr, BindDev and
	// ClientPort are the client's own; the server applies TOS, MSS and
	// DontFragment to its data sockets too.
	BindAddr     string // -B: local address of the client's control and data sockets; "" for any
	BindDev      string // --bind-dev: SO_BINDTODEVICE on the client's control and data sockets
	ClientPort   int    // --cport: the client's data port of stream 1, PORT+i-1 for stream i; 0 for ephemeral
	TOS          int    // --tos, --dscp: IP_TOS (IPV6_TCLASS) on both sides' data sockets; 0 leaves the default
	MSS          int    // --mss: TCP_MAXSEG on both sides' TCP data sockets before connect or listen; 0 for the default
	DontFragment bool   // --dont-fragment: UDP datagrams never fragmented (IP_PMTUDISC_DO); one too big fails the run
	// MPTCP (--mptcp) makes both sides' data connections Multipath TCP
	// (IPPROTO_MPTCP): the client dials them so and the server accepts
	// them on a listener of its own for the test (mptcp.go). The control
	// connection stays TCP. A server that predates the field ignores it
	// and accepts on its TCP port: the connections fall back to TCP and
	// the result says so.
	MPTCP bool
	// Fixed amount (-n, -k), iperf3's meaning: the amount is the total of
	// each direction over its streams, shared evenly by them; the senders
	// stop when it is sent and the run ends when the receivers have it,
	// Duration being an upper bound. At most one of the two is set.
	AmountBytes  int64 // -n: payload bytes per direction; 0 for none
	AmountBlocks int64 // -k: send calls of SendSize bytes per direction; 0 for none

	// RRUL (latency under load, rrul.go): the probes and the phases.
	RRUL RRULSpec
}

// Defaults for a Test, documented in the flag help.
const (
	DefaultDuration = 10 * time.Second
	DefaultInterval = time.Second
	DefaultSendSize = 128 << 10
	DefaultRecvSize = 128 << 10
	// DefaultUDPSize is the UDP_STREAM datagram payload: 1500-byte Ethernet
	// MTU less 20 bytes of IPv4 and 8 of UDP header, as netperf and iperf.
	DefaultUDPSize = 1472
	// DefaultUDP6Size is the same over IPv6, whose header is 40 bytes.
	DefaultUDP6Size = 1452
)

// Limits on what Validate accepts.
const (
	MaxMessageSize = 64 << 20
	MaxSockBuf     = 1 << 30
	MaxParallel    = 128
	MaxDuration    = 24 * time.Hour
	MinInterval    = 10 * time.Millisecond
	// MinDatagram is the smallest UDP_STREAM datagram: it carries a
	// sequence number and a send time.
	MinDatagram = 16
	// MaxDatagram is the largest UDP payload over IPv4.
	MaxDatagram = 65507
	MaxBurst    = 1024
)

// Default returns a TCP_STREAM test with every default filled in.
func Default() Test {
	return Test{
		Kind:         TCPStream,
		Duration:     DefaultDuration,
		Interval:     DefaultInterval,
		SendSize:     DefaultSendSize,
		RecvSize:     DefaultRecvSize,
		RequestSize:  1,
		ResponseSize: 1,
		Burst:        1,
		Parallel:     1,
		Payload:      Payload{Kind: PayloadRandom},
		ZeroCopy:     ZeroCopyOff,
		Rx:           RxCopy,
	}
}

var ccName = regexp.MustCompile(`^[a-z0-9_]{1,15}$`)

// ValidCCName reports whether s is shaped like a kernel congestion
// control name (cubic, bbr, dctcp): what a peer may report as one.
func ValidCCName(s string) bool { return ccName.MatchString(s) }

// Validate reports the first problem with t, in words a user can act on.
// A server validates every spec it receives again: it is untrusted input.
func (t Test) Validate() error {
	if _, err := ParseKind(string(t.Kind)); err != nil {
		return err
	}
	switch {
	case t.Duration <= 0:
		return fmt.Errorf("duration %v must be more than 0", t.Duration)
	case t.Duration > MaxDuration:
		return fmt.Errorf("duration %v is longer than the %v limit", t.Duration, MaxDuration)
	case t.Omit < 0 || t.Omit > MaxDuration:
		return fmt.Errorf("omit %v must be between 0 and %v", t.Omit, MaxDuration)
	case t.Interval != 0 && t.Interval < MinInterval:
		return fmt.Errorf("interval %v is shorter than %v; use 0 for no interval reports", t.Interval, MinInterval)
	case t.SendSize < 1 || t.SendSize > MaxMessageSize:
		return fmt.Errorf("send size %d must be between 1 and %d bytes", t.SendSize, MaxMessageSize)
	case t.RecvSize < 1 || t.RecvSize > MaxMessageSize:
		return fmt.Errorf("receive size %d must be between 1 and %d bytes", t.RecvSize, MaxMessageSize)
	case t.LocalSockBuf < 0 || t.LocalSockBuf > MaxSockBuf:
		return fmt.Errorf("local socket buffer %d must be between 0 (system default) and %d bytes", t.LocalSockBuf, MaxSockBuf)
	case t.RemoteSockBuf < 0 || t.RemoteSockBuf > MaxSockBuf:
		return fmt.Errorf("remote socket buffer %d must be between 0 (system default) and %d bytes", t.RemoteSockBuf, MaxSockBuf)
	case t.Parallel < 1 || t.Parallel > MaxParallel:
		return fmt.Errorf("parallel streams %d must be between 1 and %d", t.Parallel, MaxParallel)
	case t.CongestionControl != "" && !ccName.MatchString(t.CongestionControl):
		return fmt.Errorf("congestion control %q is not a kernel algorithm name like cubic or bbr", t.CongestionControl)
	case t.IPVersion != 0 && t.IPVersion != 4 && t.IPVersion != 6:
		return fmt.Errorf("IP version %d must be 4 or 6", t.IPVersion)
	case t.RateBitsPerSecond < 0 || t.RateBitsPerSecond != t.RateBitsPerSecond || t.RateBitsPerSecond > 1e13:
		return fmt.Errorf("rate %g bits/s must be between 0 (as fast as possible) and 10T", t.RateBitsPerSecond)
	case t.RateBitsPerSecond > 0 && t.RateBitsPerSecond < MinRate:
		return fmt.Errorf("rate %g bits/s (-b) is below the smallest, %d bits/s (a byte a second); use 0 for as fast as possible", t.RateBitsPerSecond, MinRate)
	case t.RateBitsPerSecond > 0 && t.Kind.RR():
		return fmt.Errorf("a rate (-b) paces the stream tests; %s is not paced", t.Kind)
	case t.RateBitsPerSecond > 0 && !t.Kind.UDP() && t.ZeroCopy != "" && t.ZeroCopy != ZeroCopyOff:
		return fmt.Errorf("a TCP rate (-b) paces write(2) sends; leave --zerocopy out, or cap the rate with --fq-rate")
	case t.Reverse && t.Kind != UDPStream:
		return fmt.Errorf("reverse applies to UDP_STREAM; %s names its direction", t.Kind)
	case t.Kind == UDPStream && (t.SendSize < MinDatagram || t.SendSize > MaxDatagram):
		return fmt.Errorf("UDP datagram size %d must be between %d (sequence number and time) and %d bytes", t.SendSize, MinDatagram, MaxDatagram)
	}
	if t.Kind.RR() {
		maxSize := MaxMessageSize
		if t.Kind.UDP() {
			maxSize = MaxDatagram
		}
		switch {
		case t.RequestSize < 1 || t.RequestSize > maxSize:
			return fmt.Errorf("request size %d must be between 1 and %d bytes", t.RequestSize, maxSize)
		case t.ResponseSize < 1 || t.ResponseSize > maxSize:
			return fmt.Errorf("response size %d must be between 1 and %d bytes", t.ResponseSize, maxSize)
		case t.Burst < 1 || t.Burst > MaxBurst:
			return fmt.Errorf("burst %d must be between 1 and %d transactions in flight", t.Burst, MaxBurst)
		case t.Burst > 1 && t.Kind == TCPCRR:
			return fmt.Errorf("TCP_CRR opens a connection per transaction: it has no burst")
		}
	}
	switch t.Payload.Kind {
	case PayloadRandom, PayloadHot, PayloadZeros:
	case PayloadFile:
		if t.Payload.Path == "" {
			return fmt.Errorf("payload file has no path")
		}
	default:
		return fmt.Errorf("payload %q: use random, hot, zeros or a file name", t.Payload.Kind)
	}
	if err := t.validateSockOpts(); err != nil {
		return err
	}
	if err := t.validateMPTCP(); err != nil {
		return err
	}
	if err := t.validateRRUL(); err != nil {
		return err
	}
	if err := t.CheckAmount(); err != nil {
		return err
	}
	return t.validateDataPath()
}

// MaxAmount bounds -n and -k: a petabyte, which no Duration allowed moves.
const MaxAmount = 1 << 50

// Amount is the payload bytes each direction of t moves in all, from -n
// or -k; 0 when the run is timed.
func (t Test) Amount() int64 {
	if t.AmountBlocks > 0 {
		return t.AmountBlocks * int64(t.SendSize)
	}
	return t.AmountBytes
}

// AmountShare is the part of the amount stream i (0-based) of Parallel in
// one direction sends: the amount shared evenly, the first streams taking
// one byte more each when it does not divide. For UDP_STREAM it is rounded
// up to whole datagrams of SendSize bytes, so a direction sends
// ceil(amount/size) datagrams when Parallel is 1.
func (t Test) AmountShare(i int) int64 {
	a := t.Amount()
	if a <= 0 || t.Parallel < 1 {
		return 0
	}
	p := int64(t.Parallel)
	share := a / p
	if int64(i) < a%p {
		share++
	}
	if t.Kind == UDPStream && t.SendSize > 0 {
		size := int64(t.SendSize)
		share = (share + size - 1) / size * size
	}
	return share
}

// CheckAmount checks -n and -k: each within MaxAmount in all, at least a
// byte for each of the Parallel streams (a zero share would be no limit),
// and only where a fixed amount means something. Validate calls it; so
// does the iperf3 server on the amount an iperf3 client asks it to send.
func (t Test) CheckAmount() error {
	switch {
	case t.AmountBytes == 0 && t.AmountBlocks == 0:
		return nil
	case t.AmountBytes < 0 || t.AmountBytes > MaxAmount:
		return fmt.Errorf("amount %d bytes (-n) must be between 1 and %d", t.AmountBytes, int64(MaxAmount))
	case t.AmountBlocks < 0 || t.AmountBlocks > MaxAmount/int64(max(t.SendSize, 1)):
		return fmt.Errorf("amount %d blocks (-k) of %d bytes must be between 1 and %d bytes in all", t.AmountBlocks, t.SendSize, int64(MaxAmount))
	case t.AmountBytes > 0 && t.AmountBlocks > 0:
		return fmt.Errorf("give the amount in bytes (-n) or in blocks (-k), not both")
	case t.Kind.RR():
		return fmt.Errorf("a fixed amount (-n, -k) ends a stream test; %s runs for its length (-l)", t.Kind)
	case t.Omit > 0:
		return fmt.Errorf("a fixed amount (-n, -k) is measured from the first byte to the last; it has no warm-up (--omit)")
	case t.Amount() < int64(t.Parallel):
		return fmt.Errorf("an amount of %d bytes cannot be shared by %d streams (-P): give at least a byte each", t.Amount(), t.Parallel)
	case t.GSOSize > 0:
		return fmt.Errorf("a fixed amount (-n, -k) counts datagrams one send at a time; leave --gso out")
	case t.ZeroCopy != "" && t.ZeroCopy != ZeroCopyOff:
		return fmt.Errorf("a fixed amount (-n, -k) is sent with write(2); leave --zerocopy out")
	}
	return nil
}

// Stream is one data connection of a test.
type Stream struct {
	ID  int       // 1-based, unique within a run
	Dir Direction // which way payload flows
}

// Streams returns the data connections a run of t opens, in the order the
// client opens them: Parallel streams per direction, client to server
// first, numbered from 1.
func (t Test) Streams() []Stream {
	var out []Stream
	for _, d := range t.Directions() {
		for i := 0; i < t.Parallel; i++ {
			out = append(out, Stream{ID: len(out) + 1, Dir: d})
		}
	}
	return out
}

// wire is the JSON form of a Test: durations in seconds, names in
// snake_case. It is what results documents and the control protocol carry.
type wire struct {
	Test              Kind    `json:"test"`
	DurationS         float64 `json:"duration_s"`
	OmitS             float64 `json:"omit_s"`
	IntervalS         float64 `json:"interval_s"`
	SendSize          int     `json:"send_size"`
	RecvSize          int     `json:"recv_size"`
	LocalSockBuf      int     `json:"local_sockbuf"`
	RemoteSockBuf     int     `json:"remote_sockbuf"`
	Parallel          int     `json:"parallel"`
	CongestionControl string  `json:"congestion_control"`
	NoDelay           bool    `json:"nodelay"`
	IPVersion         int     `json:"ip_version"`
	Payload           Payload `json:"payload"`
	Reverse           bool    `json:"reverse,omitempty"`
	RateBPS           float64 `json:"rate_bps,omitempty"`
	RequestSize       int     `json:"request_size,omitempty"`
	ResponseSize      int     `json:"response_size,omitempty"`
	Burst             int     `json:"burst,omitempty"`
	CPU               bool    `json:"cpu"`
	LocalCPUs         []int   `json:"local_cpus,omitempty"`
	RemoteCPUs        []int   `json:"remote_cpus,omitempty"`
	ZeroCopy          string  `json:"zerocopy,omitempty"`
	Rx                string  `json:"rx,omitempty"`
	FQRateBPS         float64 `json:"fq_rate_bps,omitempty"`
	BusyPollMicros    int     `json:"busy_poll_us,omitempty"`
	GSOSize           int     `json:"gso_size,omitempty"`
	GRO               bool    `json:"gro,omitempty"`
	// UDP batches.
	SendBatch   int    `json:"send_batch,omitempty"`
	RecvBatch   int    `json:"recv_batch,omitempty"`
	RxTimestamp string `json:"rx_timestamp,omitempty"`
	// Socket options.
	BindAddr     string `json:"bind_addr,omitempty"`
	BindDev      string `json:"bind_dev,omitempty"`
	ClientPort   int    `json:"cport,omitempty"`
	TOS          int    `json:"tos,omitempty"`
	MSS          int    `json:"mss,omitempty"`
	DontFragment bool   `json:"dont_fragment,omitempty"`
	MPTCP        bool   `json:"mptcp,omitempty"`

	// Fixed amount (-n, -k).
	AmountBytes  int64 `json:"amount_bytes,omitempty"`
	AmountBlocks int64 `json:"amount_blocks,omitempty"`

	// RRUL (rrul.go).
	RRUL *rrulWire `json:"rrul,omitempty"`
}

// MarshalJSON writes t with durations in seconds.
func (t Test) MarshalJSON() ([]byte, error) {
	return json.Marshal(wire{
		Test:              t.Kind,
		DurationS:         t.Duration.Seconds(),
		OmitS:             t.Omit.Seconds(),
		IntervalS:         t.Interval.Seconds(),
		SendSize:          t.SendSize,
		RecvSize:          t.RecvSize,
		LocalSockBuf:      t.LocalSockBuf,
		RemoteSockBuf:     t.RemoteSockBuf,
		Parallel:          t.Parallel,
		CongestionControl: t.CongestionControl,
		NoDelay:           t.NoDelay,
		IPVersion:         t.IPVersion,
		Payload:           t.Payload,
		Reverse:           t.Reverse,
		RateBPS:           t.RateBitsPerSecond,
		RequestSize:       t.RequestSize,
		ResponseSize:      t.ResponseSize,
		Burst:             t.Burst,
		CPU:               t.CPU,
		LocalCPUs:         t.LocalCPUs.CPUs(),
		RemoteCPUs:        t.RemoteCPUs.CPUs(),
		ZeroCopy:          t.ZeroCopy,
		Rx:                t.Rx,
		FQRateBPS:         t.FQRateBitsPerSecond,
		BusyPollMicros:    t.BusyPollMicros,
		GSOSize:           t.GSOSize,
		GRO:               t.GRO,
		// UDP batches.
		SendBatch:   t.SendBatch,
		RecvBatch:   t.RecvBatch,
		RxTimestamp: t.RxTimestamp,
		// Socket options.
		BindAddr:     t.BindAddr,
		BindDev:      t.BindDev,
		ClientPort:   t.ClientPort,
		TOS:          t.TOS,
		MSS:          t.MSS,
		DontFragment: t.DontFragment,
		MPTCP:        t.MPTCP,

		AmountBytes:  t.AmountBytes,
		AmountBlocks: t.AmountBlocks,

		RRUL: t.RRUL.wire(),
	})
}

// UnmarshalJSON reads the form MarshalJSON writes. It does not validate.
func (t *Test) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = Test{
		Kind:              w.Test,
		Duration:          seconds(w.DurationS),
		Omit:              seconds(w.OmitS),
		Interval:          seconds(w.IntervalS),
		SendSize:          w.SendSize,
		RecvSize:          w.RecvSize,
		LocalSockBuf:      w.LocalSockBuf,
		RemoteSockBuf:     w.RemoteSockBuf,
		Parallel:          w.Parallel,
		CongestionControl: w.CongestionControl,
		NoDelay:           w.NoDelay,
		IPVersion:         w.IPVersion,
		Payload:           w.Payload,
		Reverse:           w.Reverse,
		RateBitsPerSecond: w.RateBPS,
		RequestSize:       w.RequestSize,
		ResponseSize:      w.ResponseSize,
		Burst:             w.Burst,
		CPU:               w.CPU,

		LocalCPUs:           NewCPUList(w.LocalCPUs),
		RemoteCPUs:          NewCPUList(w.RemoteCPUs),
		ZeroCopy:            w.ZeroCopy,
		Rx:                  w.Rx,
		FQRateBitsPerSecond: w.FQRateBPS,
		BusyPollMicros:      w.BusyPollMicros,
		GSOSize:             w.GSOSize,
		GRO:                 w.GRO,
		// UDP batches.
		SendBatch:   w.SendBatch,
		RecvBatch:   w.RecvBatch,
		RxTimestamp: w.RxTimestamp,
		// Socket options.
		BindAddr:     w.BindAddr,
		BindDev:      w.BindDev,
		ClientPort:   w.ClientPort,
		TOS:          w.TOS,
		MSS:          w.MSS,
		DontFragment: w.DontFragment,
		MPTCP:        w.MPTCP,

		AmountBytes:  w.AmountBytes,
		AmountBlocks: w.AmountBlocks,

		RRUL: w.RRUL.spec(),
	}
	return nil
}

// seconds converts float seconds to a Duration, saturating instead of
// overflowing so that a hostile value fails validation rather than wrapping.
func seconds(s float64) time.Duration {
	const max = float64(1<<63-1) / float64(time.Second)
	switch {
	case s != s: // NaN
		return -1
	case s > max:
		return 1<<63 - 1
	case s < -max:
		return -1 << 63
	}
	return time.Duration(s * float64(time.Second))
}

// LookupNetwork is the network a name lookup for ipVersion asks
// net.Resolver for: "ip4" or "ip6" for -4 or -6, "ip" for either.
func LookupNetwork(ipVersion int) string {
	switch ipVersion {
	case 4:
		return "ip4"
	case 6:
		return "ip6"
	}
	return "ip"
}
