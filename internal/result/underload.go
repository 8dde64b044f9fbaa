package result

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// ProbeRecord is what the client's probes of an RRUL test measured: the
// phases' times and every probe, times in seconds from the probes' origin
// (when the client started the test).
type ProbeRecord struct {
	// LoadStartS is when the load started (the idle phase's end),
	// LoadEndS when it ended; both 0 when it never started.
	LoadStartS float64      `json:"load_start_s"`
	LoadEndS   float64      `json:"load_end_s"`
	UDP        []ProbePoint `json:"udp"`
	TCP        []ProbePoint `json:"tcp"`
	// TCPSkipped is TCP probes not sent because too many were out.
	TCPSkipped int64 `json:"tcp_skipped,omitempty"`
}

// ProbePoint is one probe: when it was sent and its round trip in
// milliseconds (Lost when it got no answer). A TCP probe's RTTMs is its
// request and response on the new connection, ConnectMs its handshake.
type ProbePoint struct {
	T         float64 `json:"t_s"`
	RTTMs     float64 `json:"rtt_ms"`
	ConnectMs float64 `json:"connect_ms,omitempty"`
	Lost      bool    `json:"lost,omitempty"`
}

// UnderLoad is an RRUL test's answer (summary.under_load): round-trip
// latency with the probes alone and under load, what the load added, the
// responsiveness, the load's throughput, and each interval of it all.
type UnderLoad struct {
	Load    string  `json:"load"`
	IdleS   float64 `json:"idle_s"`   // the idle phase's length
	LoadedS float64 `json:"loaded_s"` // the loaded phase's
	Idle    Phase   `json:"idle"`
	Loaded  Phase   `json:"loaded"`
	// IncreaseMs is the loaded median round trip less the idle one, over
	// both kinds of probe; IncreaseP99Ms the same of the 99th percentiles.
	IncreaseMs    float64 `json:"increase_ms"`
	IncreaseP99Ms float64 `json:"increase_p99_ms"`
	// ResponsivenessRPM is round trips per minute under load as
	// draft-ietf-ippm-responsiveness computes it from its foreign probes
	// (a TCP handshake and a request/response on a new connection, each
	// the mean of its fastest 95%); this test has no TLS handshake and
	// no probes on the loading connections, so only those two count.
	ResponsivenessRPM float64 `json:"responsiveness_rpm"`
	// Throughput is the load's payload rate per direction, as the
	// receivers counted it, and per flow.
	UpBitsPerSecond   float64    `json:"up_bps"`
	DownBitsPerSecond float64    `json:"down_bps"`
	Flows             []FlowRate `json:"flows"`
	// Intervals are the run cut into the spec's intervals from the
	// probes' origin.
	Intervals []LoadInterval `json:"intervals"`
	// Probes are every probe.
	Probes ProbeRecord `json:"probes"`
	// Queue is where the delay built (queue.go).
	Queue *Queue `json:"queue,omitempty"`
}

// Phase is the round-trip latency of one phase per kind of probe.
type Phase struct {
	UDP        Latency `json:"udp"`
	TCP        Latency `json:"tcp"`
	TCPConnect Latency `json:"tcp_connect"`
	All        Latency `json:"all"` // UDP and TCP request/response together
}

// Latency is a phase's round trips of one kind, in milliseconds.
type Latency struct {
	P50Ms   float64 `json:"p50_ms"`
	P90Ms   float64 `json:"p90_ms"`
	P99Ms   float64 `json:"p99_ms"`
	MeanMs  float64 `json:"mean_ms"`
	Samples int     `json:"samples"` // probes answered
	Lost    int     `json:"lost"`    // probes sent and never answered
}

// FlowRate is one loading flow's throughput, its receiver's count.
type FlowRate struct {
	ID            int            `json:"id"`
	Direction     spec.Direction `json:"direction"`
	Mark          string         `json:"mark"` // BE, BK, CS5, EF or the --dscp/--tos given
	BitsPerSecond float64        `json:"throughput_bps"`
}

// LoadInterval is one interval of an RRUL run: the probes sent in it
// and the bytes the flows' receivers got in it, on one clock (the grid
// starts at the load's start: loadIntervals).
type LoadInterval struct {
	StartS            float64 `json:"start_s"` // from the probes' origin
	EndS              float64 `json:"end_s"`
	Loaded            bool    `json:"loaded"`
	UDPP50Ms          float64 `json:"udp_p50_ms"`
	TCPP50Ms          float64 `json:"tcp_p50_ms"`
	Samples           int     `json:"samples"`
	Lost              int     `json:"lost"`
	UpBitsPerSecond   float64 `json:"up_bps"`
	DownBitsPerSecond float64 `json:"down_bps"`
	// Flows are each flow's throughput in the interval, its
	// receiver's count; absent in the idle phase.
	Flows []IntervalFlow `json:"flows,omitempty"`
}

// IntervalFlow is one flow's throughput in one interval.
type IntervalFlow struct {
	ID            int     `json:"id"`
	BitsPerSecond float64 `json:"throughput_bps"`
}

// LoadSeconds is one side's readings of its receiving flows' byte
// counters over an RRUL load, taken at the load's start, at each step
// after it (StepS: the spec's interval, or a second with -i 0) and once
// as the load ended, drain included; T is when each reading was taken,
// in seconds from the side's own load start. The client's (the
// download's) and the server's (the upload's) start within a control
// message's one-way trip of each other, taken on the idle path.
type LoadSeconds struct {
	StepS float64     `json:"step_s"`
	T     []float64   `json:"t_s"`
	Flows []FlowBytes `json:"flows"`
}

// FlowBytes is one flow's receiver's count at each reading of its
// LoadSeconds: Bytes[i] is what it had received at T[i].
type FlowBytes struct {
	ID        int            `json:"id"`
	Direction spec.Direction `json:"direction"`
	Bytes     []int64        `json:"bytes"`
}

// between is the bytes f received from a to b seconds after the load
// started, its count taken as growing evenly between readings (before
// the first reading it is 0, after the last it is the last).
func (ls *LoadSeconds) between(f FlowBytes, a, b float64) float64 {
	return ls.at(f, b) - ls.at(f, a)
}

func (ls *LoadSeconds) at(f FlowBytes, x float64) float64 {
	n := min(len(ls.T), len(f.Bytes))
	if n == 0 || x <= ls.T[0] {
		return 0
	}
	// The first reading at or after x (a binary search: the server's
	// readings come from the peer, and may be many).
	i := sort.SearchFloat64s(ls.T[:n], x)
	if i >= n {
		return float64(f.Bytes[n-1])
	}
	t0, t1 := ls.T[i-1], ls.T[i]
	b0, b1 := float64(f.Bytes[i-1]), float64(f.Bytes[i])
	if t1 <= t0 {
		return b1
	}
	return b0 + (b1-b0)*(x-t0)/(t1-t0)
}

// UnderLoadOf computes the RRUL answer from the client's probes and the
// joined directions of the load. A probe belongs to the phase it was sent
// in: idle before the load started, loaded from the load's start to its
// end; those after the end count in neither.
//
// seconds are the sides' readings of their receivers' bytes
// (SideResult.LoadSeconds; nil ones are skipped): each interval's
// throughput, per flow and summed.
func UnderLoadOf(t spec.Test, rec ProbeRecord, dirs []DirectionResult, seconds ...*LoadSeconds) *UnderLoad {
	u := &UnderLoad{Load: t.RRUL.Load, Probes: rec}
	idleEnd := rec.LoadStartS
	if rec.LoadStartS == 0 {
		// The load never started: everything is idle.
		idleEnd = math.Inf(1)
	}
	u.IdleS = t.RRUL.Idle.Seconds()
	if rec.LoadStartS > 0 {
		u.IdleS = rec.LoadStartS
		u.LoadedS = rec.LoadEndS - rec.LoadStartS
	}
	in := func(p ProbePoint, loaded bool) bool {
		if loaded {
			return rec.LoadStartS > 0 && p.T >= rec.LoadStartS && p.T < rec.LoadEndS
		}
		return p.T < idleEnd
	}
	phase := func(loaded bool) Phase {
		var ph Phase
		var udp, tcp, conn []float64
		for _, p := range rec.UDP {
			if !in(p, loaded) {
				continue
			}
			if p.Lost {
				ph.UDP.Lost++
				continue
			}
			udp = append(udp, p.RTTMs)
		}
		for _, p := range rec.TCP {
			if !in(p, loaded) {
				continue
			}
			if p.ConnectMs > 0 {
				conn = append(conn, p.ConnectMs)
			} else {
				ph.TCPConnect.Lost++
			}
			if p.Lost {
				ph.TCP.Lost++
				continue
			}
			tcp = append(tcp, p.RTTMs)
		}
		ph.UDP = latencyOf(udp, ph.UDP.Lost)
		ph.TCP = latencyOf(tcp, ph.TCP.Lost)
		ph.TCPConnect = latencyOf(conn, ph.TCPConnect.Lost)
		ph.All = latencyOf(append(append([]float64(nil), udp...), tcp...), ph.UDP.Lost+ph.TCP.Lost)
		return ph
	}
	u.Idle = phase(false)
	u.Loaded = phase(true)
	if u.Loaded.All.Samples > 0 && u.Idle.All.Samples > 0 {
		u.IncreaseMs = u.Loaded.All.P50Ms - u.Idle.All.P50Ms
		u.IncreaseP99Ms = u.Loaded.All.P99Ms - u.Idle.All.P99Ms
	}
	u.ResponsivenessRPM = responsiveness(rec)

	for _, d := range dirs {
		switch d.Direction {
		case spec.ClientToServer:
			u.UpBitsPerSecond = d.Summary.BitsPerSecond
		case spec.ServerToClient:
			u.DownBitsPerSecond = d.Summary.BitsPerSecond
		}
		for _, st := range d.Streams {
			u.Flows = append(u.Flows, FlowRate{ID: st.ID, Direction: d.Direction, Mark: markOf(t, st.ID), BitsPerSecond: st.Summary.BitsPerSecond})
		}
	}
	u.Intervals = loadIntervals(t, rec, seconds)
	return u
}

// responsiveness is 60000 over the mean of the loaded phase's foreign
// probes' trimmed means, 0 without them.
func responsiveness(rec ProbeRecord) float64 {
	if rec.LoadStartS == 0 {
		return 0
	}
	var conn, rr []float64
	for _, p := range rec.TCP {
		if p.T < rec.LoadStartS || p.T >= rec.LoadEndS {
			continue
		}
		if p.ConnectMs > 0 {
			conn = append(conn, p.ConnectMs)
		}
		if !p.Lost {
			rr = append(rr, p.RTTMs)
		}
	}
	if len(conn) == 0 || len(rr) == 0 {
		return 0
	}
	ms := (stats.TrimmedMean(conn, 0.05) + stats.TrimmedMean(rr, 0.05)) / 2
	if ms <= 0 {
		return 0
	}
	return 60000 / ms
}

// LatencyOf is the percentiles and mean of round trips ms, with lost
// probes counted beside them.
func LatencyOf(ms []float64, lost int) Latency { return latencyOf(ms, lost) }

func latencyOf(ms []float64, lost int) Latency {
	l := Latency{Samples: len(ms), Lost: lost}
	if len(ms) == 0 {
		return l
	}
	q := stats.Quantiles(ms, 0.5, 0.9, 0.99)
	l.P50Ms, l.P90Ms, l.P99Ms = q[0], q[1], q[2]
	var sum float64
	for _, v := range ms {
		sum += v
	}
	l.MeanMs = sum / float64(len(ms))
	return l
}

// markOf names the DiffServ mark of stream id.
func markOf(t spec.Test, id int) string {
	if t.TOS != 0 {
		return "tos " + strconv.Itoa(t.TOS)
	}
	return spec.RRULMarkNames[t.FlowIndex(spec.Stream{ID: id})%len(spec.RRULMarkNames)]
}

// loadIntervals cuts the run into the spec's intervals (a second with
// -i 0) on one clock: the grid starts at the load's start and steps
// back over the idle phase to the origin (the first interval takes the
// remainder: from half a step to a step and a half long) and on past the
// load's end while probes went. Each interval
// holds the probes sent in it and, from the sides' readings, the bytes
// the receivers got in it; it is loaded when the load ran in more than
// a tenth of it.
func loadIntervals(t spec.Test, rec ProbeRecord, seconds []*LoadSeconds) []LoadInterval {
	step := t.Interval.Seconds()
	if step <= 0 {
		step = 1
	}
	end := rec.LoadEndS
	for _, ps := range [][]ProbePoint{rec.UDP, rec.TCP} {
		for _, p := range ps {
			end = max(end, p.T)
		}
	}
	// The first interval runs from the origin to the grid's first point
	// after it (the load's start, less whole steps), that point skipped
	// when it is under half a step in: then the first is longer.
	first := step
	if rec.LoadStartS > 0 {
		first = rec.LoadStartS - math.Floor(rec.LoadStartS/step+1e-9)*step
		if first < step/2 {
			first += step
		}
	}
	// The load ends when its senders stop (or its windows closed, when
	// that was earlier: an interrupt); a receiver's window may close a
	// little later, draining.
	loadEnd := rec.LoadEndS
	if planned := rec.LoadStartS + (t.Omit + t.Duration).Seconds(); t.Duration > 0 && planned < loadEnd {
		loadEnd = planned
	}
	index := func(x float64) int {
		if x < first {
			return 0
		}
		return 1 + int(math.Floor((x-first)/step))
	}
	n := index(end) + 1
	if end <= 0 || n > 1<<16 {
		return []LoadInterval{}
	}
	out := make([]LoadInterval, n)
	udp := make([][]float64, n)
	tcp := make([][]float64, n)
	for i := range out {
		out[i].StartS, out[i].EndS = 0, first
		if i > 0 {
			out[i].StartS, out[i].EndS = first+float64(i-1)*step, first+float64(i)*step
		}
		in := min(out[i].EndS, loadEnd) - max(out[i].StartS, rec.LoadStartS)
		out[i].Loaded = rec.LoadStartS > 0 && in > step/10
	}
	add := func(ps []ProbePoint, into [][]float64) {
		for _, p := range ps {
			i := index(p.T)
			if i < 0 || i >= n {
				continue
			}
			if p.Lost {
				out[i].Lost++
				continue
			}
			out[i].Samples++
			into[i] = append(into[i], p.RTTMs)
		}
	}
	add(rec.UDP, udp)
	add(rec.TCP, tcp)
	for i := range out {
		if len(udp[i]) > 0 {
			out[i].UDPP50Ms = stats.Quantile(udp[i], 0.5)
		}
		if len(tcp[i]) > 0 {
			out[i].TCPP50Ms = stats.Quantile(tcp[i], 0.5)
		}
	}
	if rec.LoadStartS == 0 {
		return out
	}
	for _, ls := range seconds {
		if ls == nil {
			continue
		}
		for _, f := range ls.Flows {
			for i := range out {
				// The interval in seconds from the load's start.
				a, b := out[i].StartS-rec.LoadStartS, out[i].EndS-rec.LoadStartS
				if b <= 1e-9 {
					continue
				}
				bps := ls.between(f, max(a, 0), b) * 8 / (b - a)
				out[i].Flows = append(out[i].Flows, IntervalFlow{ID: f.ID, BitsPerSecond: bps})
				if f.Direction == spec.ClientToServer {
					out[i].UpBitsPerSecond += bps
				} else {
					out[i].DownBitsPerSecond += bps
				}
			}
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Flows, func(x, y IntervalFlow) int { return x.ID - y.ID })
	}
	return out
}

// meanUnderLoad is the RRUL answer of iterations: nil when none has one,
// the one when one has; for several, the last iteration's with its
// headline figures (each phase's overall round trips, the increase, the
// responsiveness and the throughputs) replaced by their means over the
// iterations: a mean of percentiles, not the percentile of all probes.
func meanUnderLoad(ss []Summary) *UnderLoad {
	var us []*UnderLoad
	for _, s := range ss {
		if s.UnderLoad != nil {
			us = append(us, s.UnderLoad)
		}
	}
	switch len(us) {
	case 0:
		return nil
	case 1:
		return us[0]
	}
	m := *us[len(us)-1]
	n := float64(len(us))
	m.Idle.All, m.Loaded.All = Latency{}, Latency{}
	m.IncreaseMs, m.IncreaseP99Ms, m.ResponsivenessRPM, m.UpBitsPerSecond, m.DownBitsPerSecond = 0, 0, 0, 0, 0
	for _, u := range us {
		for _, ph := range []struct{ to, from *Latency }{{&m.Idle.All, &u.Idle.All}, {&m.Loaded.All, &u.Loaded.All}} {
			ph.to.P50Ms += ph.from.P50Ms / n
			ph.to.P90Ms += ph.from.P90Ms / n
			ph.to.P99Ms += ph.from.P99Ms / n
			ph.to.MeanMs += ph.from.MeanMs / n
			ph.to.Samples += ph.from.Samples
			ph.to.Lost += ph.from.Lost
		}
		m.IncreaseMs += u.IncreaseMs / n
		m.IncreaseP99Ms += u.IncreaseP99Ms / n
		m.ResponsivenessRPM += u.ResponsivenessRPM / n
		m.UpBitsPerSecond += u.UpBitsPerSecond / n
		m.DownBitsPerSecond += u.DownBitsPerSecond / n
	}
	return &m
}
