package result

import (
	"strings"

	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
)

// QueueRecord is one side's egress queue over an RRUL run: the root qdisc
// of the device its traffic toward the peer leaves by, sampled every
// QueueSampleEvery from the side's start, and when its load ran by its
// own clock.
type QueueRecord struct {
	Dev  string `json:"dev"`
	Kind string `json:"kind"`
	// Netns is the namespace of a router's device (RouterQueues); ""
	// for a side's own.
	Netns string `json:"netns,omitempty"`
	// RateBitsPerSecond and LimitBytes are a tbf's settings; 0 for
	// other qdiscs, whose rate is what they sent.
	RateBitsPerSecond float64       `json:"rate_bps,omitempty"`
	LimitBytes        uint32        `json:"limit_bytes,omitempty"`
	LoadStartS        float64       `json:"load_start_s"`
	LoadEndS          float64       `json:"load_end_s"`
	Samples           []QueueSample `json:"samples"`
	Error             string        `json:"error,omitempty"`
}

// QueueSample is the qdisc's counters at T seconds from the side's start.
type QueueSample struct {
	T float64 `json:"t_s"`
	measure.QdiscStats
}

// Queue is where the delay under load built (summary.under_load.queue),
// in two kinds of part that are never added together:
//
//   - the delay the probes see, per place on the path: each side's egress
//     qdisc and, in a routed lab, the router's egresses (Sides), over the
//     loaded phase. A probe crosses each once (one egress each way), so
//     their delays sum to QdiscMs, to be set against the increase; what
//     the sampled places leave of it, when they explain under 70%, is
//     ElsewhereMs, on the path but not sampled (a router not a lab's, a
//     modem, a CPU).
//   - the flows' own data waiting in their send buffers (Sockets): it
//     waits before the path, the probes never cross it.
type Queue struct {
	Sides []SideQueue `json:"sides"`
	// QdiscMs is the sampled qdiscs' delays together: what a probe
	// crossing all of them waits in them. Where names the places whose
	// queue holds a tenth of the increase or more ("client", "server",
	// "both" for those two, "router", or several joined by " and ", as
	// "client and router"), or "elsewhere" when they explain under half
	// of it.
	QdiscMs float64 `json:"qdisc_ms"`
	// ElsewhereMs is the increase less QdiscMs when the places sampled
	// explain under 70% of an increase of 2 ms or more; 0 otherwise.
	ElsewhereMs float64 `json:"elsewhere_ms"`
	Where       string  `json:"where"`
	// Sockets are each side's loading flows' unsent data: not delay the
	// probes see, and in no figure above.
	Sockets []SocketQueue `json:"sockets,omitempty"`
	// HostQueue, when set, is the one-line reason a flent-like load reads
	// less on this path: the queue is a sending host's own qdisc and
	// the flows were opened before the load (hostQueueNote).
	HostQueue *HostQueue `json:"host_queue,omitempty"`
}

// SocketQueue is one side's loading flows' send buffers under load
// (TCP_INFO at each interval, or at the window's end with -i 0): the
// mean bytes they held unsent, summed over the side's flows, how long
// the side's data waits there at its sending rate, and the largest
// smoothed RTT its senders saw.
type SocketQueue struct {
	Side         Side    `json:"side"`
	NotsentBytes float64 `json:"notsent_bytes"`
	WaitMs       float64 `json:"wait_ms"`
	SRTTMs       float64 `json:"srtt_ms"`
}

// HostQueue is a sending host's own qdisc holding the delay while the
// flows were opened on the idle path (spec.RRULStartIdle): TCP small
// queues let each flow keep about two of its TSO packets there, and a
// flow whose smallest round trip was under a millisecond sends packets
// of up to 64 KB (TSO autosizing, net.ipv4.tcp_tso_rtt_log). Flows opened
// as the load starts, as flent's netperf opens them, mostly meet a full
// queue first and hold a few KB each: their load reads less delay.
type HostQueue struct {
	Side         Side    `json:"side"`
	Dev          string  `json:"dev"`
	Flows        int     `json:"flows"`
	PerFlowBytes float64 `json:"per_flow_bytes"` // the qdisc's mean backlog over its flows
}

// SideQueue is one side's queues under load, or one router egress's
// (Side Router, Netns its namespace; no socket figures).
type SideQueue struct {
	Side  Side   `json:"side"`
	Dev   string `json:"dev"`
	Netns string `json:"netns,omitempty"`
	Kind  string `json:"kind"`
	// RateBitsPerSecond is what the delay is computed at: the tbf's rate,
	// or else what the qdisc sent over the loaded phase (RateFrom says
	// which: "tbf" or "sent").
	RateBitsPerSecond float64 `json:"rate_bps"`
	RateFrom          string  `json:"rate_from"`
	// BacklogBytes is the qdisc's mean backlog over the loaded phase's
	// samples, MaxBacklogBytes the largest; DelayMs the mean backlog at
	// the rate.
	BacklogBytes    float64 `json:"backlog_bytes"`
	MaxBacklogBytes uint64  `json:"max_backlog_bytes"`
	DelayMs         float64 `json:"delay_ms"`
	Drops           uint64  `json:"drops"`
	Requeues        uint64  `json:"requeues"`
	Samples         int     `json:"samples"`
	Error           string  `json:"error,omitempty"`
}

// QueueSampleEvery is how often each side samples its qdisc in an RRUL
// run, in seconds.
const QueueSampleEvery = 0.2

// MaxQueueSamples bounds the samples a side keeps for t: one every
// QueueSampleEvery over the run, with room for its ends.
func MaxQueueSamples(t spec.Test) int {
	return int((t.Length()+30e9).Seconds()/QueueSampleEvery) + 1
}

// AttributeQueue fills u.Queue from the sides' queue records (nil when a
// side has none), a routed lab's router queues (the client's) and the
// joined directions.
func AttributeQueue(u *UnderLoad, local, remote *QueueRecord, routers []QueueRecord, dirs []DirectionResult) {
	if u == nil || (local == nil && remote == nil && len(routers) == 0) {
		return
	}
	q := &Queue{}
	sends := map[Side]spec.Direction{Local: spec.ClientToServer, Remote: spec.ServerToClient}
	for _, side := range []struct {
		side Side
		rec  *QueueRecord
	}{{Local, local}, {Remote, remote}} {
		if side.rec == nil {
			continue
		}
		sq := sideQueue(side.side, side.rec)
		for _, d := range dirs {
			if d.Direction == sends[side.side] {
				q.Sockets = append(q.Sockets, socketQueue(side.side, d))
			}
		}
		q.QdiscMs += sq.DelayMs
		q.Sides = append(q.Sides, sq)
	}
	for i := range routers {
		sq := sideQueue(Router, &routers[i])
		q.QdiscMs += sq.DelayMs
		q.Sides = append(q.Sides, sq)
	}
	named := map[Side]bool{}
	for _, s := range q.Sides {
		if s.DelayMs >= 1 && s.DelayMs >= 0.1*u.IncreaseMs {
			named[s.Side] = true
		}
	}
	var names []string
	for _, s := range []struct {
		side Side
		name string
	}{{Local, "client"}, {Remote, "server"}, {Router, "router"}} {
		if named[s.side] {
			names = append(names, s.name)
		}
	}
	switch {
	case u.IncreaseMs >= 2 && q.QdiscMs < 0.5*u.IncreaseMs:
		q.Where = "elsewhere"
	case len(names) == 2 && named[Local] && named[Remote]:
		q.Where = "both"
	case len(names) > 0:
		q.Where = strings.Join(names, " and ")
	case u.IncreaseMs >= 2:
		q.Where = "elsewhere"
	default:
		q.Where = "none"
	}
	if u.IncreaseMs >= 2 && q.QdiscMs < 0.7*u.IncreaseMs {
		q.ElsewhereMs = u.IncreaseMs - q.QdiscMs
	}
	q.HostQueue = hostQueueNote(q, u.IncreaseMs, dirs)
	u.Queue = q
}

// HostQueueMinPerFlow is the mean backlog per flow in a sending host's
// own qdisc above which the flows' packets are TSO-autosized ones: two
// of netperf's flows opened under load held about 7.5 KB each on the
// cookbook's lab, two 1448-byte segments a packet.
const HostQueueMinPerFlow = 16 << 10

// hostQueueNote is the host queue of q that explains why a flent-like
// load reads less: the largest named delay in a side's own qdisc, whose
// flows each hold HostQueueMinPerFlow or more there on average; nil
// when there is none.
func hostQueueNote(q *Queue, increaseMs float64, dirs []DirectionResult) *HostQueue {
	sends := map[Side]spec.Direction{Local: spec.ClientToServer, Remote: spec.ServerToClient}
	var best *HostQueue
	bestMs := 0.0
	for _, s := range q.Sides {
		if s.Side == Router || s.DelayMs < 1 || s.DelayMs < 0.1*increaseMs || s.DelayMs <= bestMs {
			continue
		}
		flows := 0
		for _, d := range dirs {
			if d.Direction == sends[s.Side] {
				flows += len(d.Streams)
			}
		}
		if flows == 0 || s.BacklogBytes/float64(flows) < HostQueueMinPerFlow {
			continue
		}
		best, bestMs = &HostQueue{Side: s.Side, Dev: s.Dev, Flows: flows, PerFlowBytes: s.BacklogBytes / float64(flows)}, s.DelayMs
	}
	return best
}

func sideQueue(side Side, rec *QueueRecord) SideQueue {
	sq := SideQueue{Side: side, Dev: rec.Dev, Netns: rec.Netns, Kind: rec.Kind, Error: rec.Error}
	var in []QueueSample
	for _, s := range rec.Samples {
		if s.T >= rec.LoadStartS && s.T <= rec.LoadEndS {
			in = append(in, s)
		}
	}
	sq.Samples = len(in)
	if len(in) == 0 {
		return sq
	}
	var sum float64
	for _, s := range in {
		sum += float64(s.BacklogBytes)
		sq.MaxBacklogBytes = max(sq.MaxBacklogBytes, s.BacklogBytes)
	}
	sq.BacklogBytes = sum / float64(len(in))
	first, last := in[0], in[len(in)-1]
	if last.Drops >= first.Drops {
		sq.Drops = last.Drops - first.Drops
	}
	if last.Requeues >= first.Requeues {
		sq.Requeues = last.Requeues - first.Requeues
	}
	switch {
	case rec.RateBitsPerSecond > 0:
		sq.RateBitsPerSecond, sq.RateFrom = rec.RateBitsPerSecond, "tbf"
	case last.T > first.T && last.SentBytes > first.SentBytes:
		sq.RateBitsPerSecond, sq.RateFrom = float64(last.SentBytes-first.SentBytes)*8/(last.T-first.T), "sent"
	}
	if sq.RateBitsPerSecond > 0 {
		sq.DelayMs = sq.BacklogBytes * 8 / sq.RateBitsPerSecond * 1e3
	}
	return sq
}

// socketQueue is the socket figures of the side that sends d. Without
// intervals (-i 0) it takes the senders' TCP_INFO at the window's end,
// one sample.
func socketQueue(side Side, d DirectionResult) SocketQueue {
	sq := SocketQueue{Side: side}
	var notsent float64
	for _, iv := range d.Intervals {
		notsent += float64(iv.NotsentBytes)
		sq.SRTTMs = max(sq.SRTTMs, iv.RTTMicros/1e3)
	}
	if len(d.Intervals) > 0 {
		sq.NotsentBytes = notsent / float64(len(d.Intervals))
	} else {
		for _, st := range d.Streams {
			if ti := st.Sender.TCPInfo; ti != nil {
				sq.NotsentBytes += float64(ti.NotsentBytes)
				sq.SRTTMs = max(sq.SRTTMs, ti.RTTMicros/1e3)
			}
		}
	}
	if bps := d.Summary.SenderBitsPerSecond; bps > 0 {
		sq.WaitMs = sq.NotsentBytes * 8 / bps * 1e3
	}
	return sq
}
