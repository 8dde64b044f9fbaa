package spec

import (
	"fmt"
	"time"
)

// RRULSpec is what an RRUL test (latency under load, flent's "realtime
// response under load") adds to a Test: which directions carry the load,
// how long the probes run alone before it, and how often each kind of
// probe goes. The TCP flows are the Test's own: Parallel per direction.
type RRULSpec struct {
	// Load is the direction of the loading flows: LoadBoth (flent's
	// rrul), LoadUp (client to server) or LoadDown (server to client).
	Load string
	// Idle is the phase with the probes alone, before the load starts.
	Idle time.Duration
	// UDPProbeInterval is the time between isochronous UDP probes (as
	// irtt's -i); TCPProbeInterval between TCP probes, each a fresh
	// connection with one request and its response.
	UDPProbeInterval time.Duration
	TCPProbeInterval time.Duration
}

// The loads of an RRUL test.
const (
	LoadBoth = "both"
	LoadUp   = "up"
	LoadDown = "down"
)

// Defaults of an RRUL test.
const (
	DefaultRRULParallel     = 4 // flows per direction, marked BE, BK, CS5, EF as flent's rrul
	DefaultIdle             = 5 * time.Second
	DefaultUDPProbeInterval = 20 * time.Millisecond
	DefaultTCPProbeInterval = 200 * time.Millisecond
)

// Bounds of an RRUL test's settings.
const (
	MinProbeInterval    = time.Millisecond
	MinTCPProbeInterval = 10 * time.Millisecond
	MaxProbeInterval    = 10 * time.Second
	MinIdle             = time.Second
	MaxIdle             = time.Minute
	// ProbeSize is the payload of a UDP probe and of its echo: a magic,
	// a sequence number and the send time.
	ProbeSize = 32
	// RRULProbeStreams is how many connections the probes add to the
	// flows: the UDP probe socket and the TCP probe listener.
	RRULProbeStreams = 2
)

// DefaultRRUL is an RRUL test's settings when the user gives none.
func DefaultRRUL() RRULSpec {
	return RRULSpec{Load: LoadBoth, Idle: DefaultIdle, UDPProbeInterval: DefaultUDPProbeInterval, TCPProbeInterval: DefaultTCPProbeInterval}
}

func (t Test) rrulDirections() []Direction {
	switch t.RRUL.Load {
	case LoadUp:
		return []Direction{ClientToServer}
	case LoadDown:
		return []Direction{ServerToClient}
	}
	return []Direction{ClientToServer, ServerToClient}
}

// ProbeRateBitsPerSecond is the UDP payload rate at which the RRUL test's
// probes make the server send: one echo per probe interval.
func (t Test) ProbeRateBitsPerSecond() float64 {
	if t.Kind != RRUL || t.RRUL.UDPProbeInterval <= 0 {
		return 0
	}
	return ProbeSize * 8 / t.RRUL.UDPProbeInterval.Seconds()
}

// rrulMarks are the DiffServ code points of flent's rrul flows, in the
// order each direction's flows take them: best effort, background (CS1),
// CS5 and expedited forwarding.
var rrulMarks = [4]int{0, 8, 40, 46}

// RRULMarkNames names rrulMarks.
var RRULMarkNames = [4]string{"BE", "BK", "CS5", "EF"}

// StreamTOS is the TOS byte of stream st's data sockets: --tos or --dscp
// when given; in an RRUL test otherwise the flent rrul mark of the
// stream's place in its direction (BE, BK, CS5, EF, then again).
func (t Test) StreamTOS(st Stream) int {
	if t.TOS != 0 || t.Kind != RRUL || st.ID < 1 {
		return t.TOS
	}
	return rrulMarks[t.FlowIndex(st)%len(rrulMarks)] << 2
}

// FlowIndex is the 0-based place of st among its direction's streams.
func (t Test) FlowIndex(st Stream) int {
	if t.Parallel < 1 {
		return 0
	}
	return (st.ID - 1) % t.Parallel
}

// validateRRUL checks the RRUL settings: present only for RRUL, and
// within their bounds there.
func (t Test) validateRRUL() error {
	r := t.RRUL
	if t.Kind != RRUL {
		if r != (RRULSpec{}) {
			return fmt.Errorf("--load, --idle and the probe intervals apply to the RRUL test, not to %s", t.Kind)
		}
		return nil
	}
	switch {
	case r.Load != LoadBoth && r.Load != LoadUp && r.Load != LoadDown:
		return fmt.Errorf("load %q: use both, up (client to server) or down (server to client)", r.Load)
	case r.UDPProbeInterval < MinProbeInterval:
		return fmt.Errorf("UDP probe interval %v is under %v: the probes would be load themselves; give --probe-interval 1ms or more (default %v)", r.UDPProbeInterval, MinProbeInterval, DefaultUDPProbeInterval)
	case r.UDPProbeInterval > MaxProbeInterval:
		return fmt.Errorf("UDP probe interval %v is over %v", r.UDPProbeInterval, MaxProbeInterval)
	case r.TCPProbeInterval < MinTCPProbeInterval:
		return fmt.Errorf("TCP probe interval %v is under %v: each probe is a new connection; give --tcp-probe-interval 10ms or more (default %v)", r.TCPProbeInterval, MinTCPProbeInterval, DefaultTCPProbeInterval)
	case r.TCPProbeInterval > MaxProbeInterval:
		return fmt.Errorf("TCP probe interval %v is over %v", r.TCPProbeInterval, MaxProbeInterval)
	case r.Idle < MinIdle || r.Idle > MaxIdle:
		return fmt.Errorf("idle phase %v must be between %v and %v: the idle latency needs its samples", r.Idle, MinIdle, MaxIdle)
	case t.Omit > 0:
		return fmt.Errorf("RRUL measures from the load's start: its idle phase (--idle) comes before the load; leave --omit out")
	case t.ClientPort != 0:
		return fmt.Errorf("--cport cannot apply to RRUL: its TCP probes open a connection each")
	case t.AmountBytes != 0 || t.AmountBlocks != 0:
		return fmt.Errorf("a fixed amount (-n, -k) ends a stream test; RRUL runs for its length (-l)")
	case t.ZeroCopy != "" && t.ZeroCopy != ZeroCopyOff, t.Rx != "" && t.Rx != RxCopy:
		return fmt.Errorf("RRUL's flows write and read: leave --zerocopy and --rx out")
	}
	return nil
}

// rrulWire is the JSON form of RRULSpec.
type rrulWire struct {
	Load              string  `json:"load"`
	IdleS             float64 `json:"idle_s"`
	UDPProbeIntervalS float64 `json:"udp_probe_interval_s"`
	TCPProbeIntervalS float64 `json:"tcp_probe_interval_s"`
}

func (r RRULSpec) wire() *rrulWire {
	if r == (RRULSpec{}) {
		return nil
	}
	return &rrulWire{Load: r.Load, IdleS: r.Idle.Seconds(), UDPProbeIntervalS: r.UDPProbeInterval.Seconds(), TCPProbeIntervalS: r.TCPProbeInterval.Seconds()}
}

func (w *rrulWire) spec() RRULSpec {
	if w == nil {
		return RRULSpec{}
	}
	return RRULSpec{Load: w.Load, Idle: seconds(w.IdleS), UDPProbeInterval: seconds(w.UDPProbeIntervalS), TCPProbeInterval: seconds(w.TCPProbeIntervalS)}
}

// Length is how long a run of t keeps its streams busy by plan: the
// warm-up, the window and, for RRUL, the idle phase before the load.
func (t Test) Length() time.Duration { return t.Omit + t.Duration + t.RRUL.Idle }
