package iperf3

import (
	"encoding/json"
	"fmt"
	"regexp"

	"wirespeed/internal/spec"
)

// Params are the test parameters an iperf3 client sends after
// PARAM_EXCHANGE, as far as wirespeed reads them. Times are whole
// seconds, as iperf3 sends them; rates are bits per second.
type Params struct {
	TCP, UDP      bool
	Omit          int   // seconds of warm-up left out of the results
	Time          int   // seconds; 0 when the test is bounded by Num or BlockCount
	Num           int64 // bytes to send (-n); 0 for none
	BlockCount    int64 // blocks to send (-k); 0 for none
	Parallel      int
	Reverse       bool
	Bidirectional bool
	Len           int   // bytes per send (TCP) or per datagram (UDP)
	Bandwidth     int64 // bits/s per stream; 0 unpaced (TCP) or iperf3's default (UDP)
	Window        int   // socket buffer size; 0 for the system's
	MSS           int
	NoDelay       bool
	Congestion    string
	PacingTimer   int   // microseconds
	FQRate        int64 // bits/s
	Burst         int
	TOS           int
	FlowLabel     int
	Title         string
	ExtraData     string
	// GetServerOutput asks the server to send its own output with its
	// results; wirespeed's server sends none.
	GetServerOutput  bool
	UDPCounters64    bool
	RepeatingPayload bool
	ZeroCopy         bool
	DontFragment     bool
	SkipRxCopy       bool
	ClientVersion    string
	AuthToken        string
}

// Bounds of the parameters wirespeed accepts.
const (
	maxSeconds  = int64(spec.MaxDuration / 1e9)
	maxRate     = int64(1e13) // 10 Tbit/s, spec.Validate's bound
	maxString   = 4096
	maxMSS      = 9216 // iperf3's own bound
	maxBurst    = 1000
	maxPacingUS = 10_000_000
)

var ccName = regexp.MustCompile(`^[a-z0-9_]{1,15}$`)

// ParseParams reads an iperf3 client's parameters strictly: each known
// field must have its JSON type (an integer is an integer, not a string
// or a fraction) and be within its range; unknown fields are ignored.
func ParseParams(b []byte) (Params, error) {
	if len(b) > MaxParamsLen {
		return Params{}, fmt.Errorf("%w: parameters of %d bytes, more than %d", ErrProtocol, len(b), MaxParamsLen)
	}
	o, err := parseObject("parameters", b)
	if err != nil {
		return Params{}, err
	}
	p := Params{
		TCP:              o.Bool("tcp", false),
		UDP:              o.Bool("udp", false),
		Omit:             int(o.Int("omit", 0, maxSeconds, 0)),
		Time:             int(o.Int("time", 0, maxSeconds, 0)),
		Num:              o.Int("num", 0, 1<<62, 0),
		BlockCount:       o.Int("blockcount", 0, 1<<62, 0),
		Parallel:         int(o.Int("parallel", 1, spec.MaxParallel, 1)),
		Reverse:          o.Bool("reverse", false),
		Bidirectional:    o.Bool("bidirectional", false),
		Len:              int(o.Int("len", 1, spec.MaxMessageSize, 0)),
		Bandwidth:        o.Int("bandwidth", 0, maxRate, 0),
		Window:           int(o.Int("window", 0, spec.MaxSockBuf, 0)),
		MSS:              int(o.Int("MSS", 0, maxMSS, 0)),
		NoDelay:          o.Bool("nodelay", false),
		Congestion:       o.String("congestion", 15, ""),
		PacingTimer:      int(o.Int("pacing_timer", 0, maxPacingUS, 0)),
		FQRate:           o.Int("fqrate", 0, maxRate, 0),
		Burst:            int(o.Int("burst", 0, maxBurst, 0)),
		TOS:              int(o.Int("TOS", 0, 255, 0)),
		FlowLabel:        int(o.Int("flowlabel", 0, 1<<20-1, 0)),
		Title:            o.String("title", maxString, ""),
		ExtraData:        o.String("extra_data", maxString, ""),
		GetServerOutput:  o.Bool("get_server_output", false),
		UDPCounters64:    o.Bool("udp_counters_64bit", false),
		RepeatingPayload: o.Bool("repeating_payload", false),
		ZeroCopy:         o.Bool("zerocopy", false),
		DontFragment:     o.Bool("dont_fragment", false),
		SkipRxCopy:       o.Bool("skip_rx_copy", false),
		ClientVersion:    o.String("client_version", 64, ""),
		AuthToken:        o.String("authtoken", maxString, ""),
	}
	if o.err != nil {
		return Params{}, o.err
	}
	switch {
	case p.TCP == p.UDP:
		return p, fmt.Errorf("%w: parameters must ask for exactly one of tcp and udp", ErrProtocol)
	case p.Congestion != "" && !ccName.MatchString(p.Congestion):
		return p, fmt.Errorf("%w: congestion control %q is not a kernel algorithm name", ErrProtocol, clip(p.Congestion))
	case p.Reverse && p.Bidirectional:
		return p, fmt.Errorf("%w: parameters ask for both reverse and bidirectional", ErrProtocol)
	}
	return p, nil
}

// paramsWire is the JSON form a client sends, in iperf3's field order.
type paramsWire struct {
	TCP           bool   `json:"tcp,omitempty"`
	UDP           bool   `json:"udp,omitempty"`
	Omit          int    `json:"omit"`
	Time          int    `json:"time"`
	Num           int64  `json:"num"`
	BlockCount    int64  `json:"blockcount"`
	Parallel      int    `json:"parallel"`
	Reverse       bool   `json:"reverse,omitempty"`
	Bidirectional bool   `json:"bidirectional,omitempty"`
	Window        int    `json:"window,omitempty"`
	Len           int    `json:"len"`
	Bandwidth     int64  `json:"bandwidth,omitempty"`
	NoDelay       bool   `json:"nodelay,omitempty"`
	Congestion    string `json:"congestion,omitempty"`
	PacingTimer   int    `json:"pacing_timer,omitempty"`
	UDPCounters64 bool   `json:"udp_counters_64bit,omitempty"`
	// The socket options iperf3's protocol carries (-M, -S, --dont-fragment),
	// under iperf3's names; iperf3 sends dont_fragment as the number 1.
	MSS          int `json:"MSS,omitempty"`
	TOS          int `json:"TOS,omitempty"`
	DontFragment int `json:"dont_fragment,omitempty"`
}

// Marshal writes the parameters a client sends.
func (p Params) Marshal() ([]byte, error) {
	return json.Marshal(paramsWire{
		TCP: p.TCP, UDP: p.UDP, Omit: p.Omit, Time: p.Time, Num: p.Num, BlockCount: p.BlockCount,
		Parallel: p.Parallel, Reverse: p.Reverse, Bidirectional: p.Bidirectional, Window: p.Window,
		Len: p.Len, Bandwidth: p.Bandwidth, NoDelay: p.NoDelay, Congestion: p.Congestion,
		PacingTimer: p.PacingTimer, UDPCounters64: p.UDPCounters64,
		MSS: p.MSS, TOS: p.TOS, DontFragment: b2i(p.DontFragment),
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Streams is how many data streams the test opens: Parallel per
// direction.
func (p Params) Streams() int {
	if p.Bidirectional {
		return 2 * p.Parallel
	}
	return p.Parallel
}
