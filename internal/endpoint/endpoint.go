// Package endpoint runs one end of a test: it starts the engine loops on
// this side's data connections, samples their counters and TCP_INFO on the
// agreed schedule with the monotonic clock, stops the active loops when the
// window ends, drains the passive ones, and returns a result.SideResult. The
// client and the server both run exactly this code for their side.
//
// Each direction of a test is a flow with an active role (a sender, or the
// requester of a request/response test) and a passive one (a receiver, or
// the responder). The schedule of a flow starts at its origin: for the
// active role, when Run is called (the moment it starts); for the passive
// role, when its first data arrives. Anchoring the passive side on its
// first byte keeps the two windows one one-way delay apart, whatever the
// round trip of the control connection. The window opens Omit after the
// origin and closes Duration later; intervals are scheduled against
// absolute times, so they do not drift. With a fixed amount (-n, -k) the
// senders stop by themselves when they have sent their share, and each
// flow's window runs from its origin to the end of its loops, Duration
// being the upper bound.
package endpoint

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"wirespeed/internal/engine"
	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/units"
)

// Conn is one established data connection of this side.
type Conn struct {
	ID  int
	Dir spec.Direction
	// Conn is a *net.TCPConn or a connected *net.UDPConn; nil for TCP_CRR,
	// which opens a connection per transaction.
	Conn net.Conn
}

// Config is what Run needs.
type Config struct {
	Spec spec.Test
	// Side is who runs this: the client (Local) or the server (Remote). In
	// a request/response test the client makes the requests.
	Side  result.Side
	Sends spec.Direction // the direction this side sends in, for stream tests
	Conns []Conn
	// Payload is the file's content when Spec.Payload.Kind is "file".
	Payload []byte
	// OnInterval, when set, is called with each interval of each flow as it
	// ends. It may be called from several goroutines at once and must not
	// block for long.
	OnInterval func(result.IntervalReport)
	// StreamIntervals keeps intervals out of the result: they reach
	// OnInterval only, and the side holds none of them (the server, for a
	// client that keeps its reports: control.TestRequest.StreamedIntervals).
	StreamIntervals bool
	// DrainTimeout bounds how long a passive loop keeps going after its
	// window to reach the peer's end of stream. Default 5s.
	DrainTimeout time.Duration
	// FirstByteGrace is how long past the planned end a passive loop waits
	// for its first data before giving up on an empty window. Default 5s.
	FirstByteGrace time.Duration

	// TCP_CRR: the client connects to CRRAddr over CRRNetwork with
	// CRROptions for every transaction; the server's loops share CRR.
	CRRNetwork string
	CRRAddr    string
	CRROptions engine.Options
	CRR        *engine.CRRShared

	// ProcRoot is where /proc is mounted, for the kernel's counters and
	// the CPU figures the spec may ask for; default
	// measure.DefaultProcRoot, this process's network namespace.
	ProcRoot string

	// UDPOptions are passed to the UDP_STREAM loops: iperf3's datagram
	// header when the peer is iperf3 (engine.Iperf3Header).
	UDPOptions []engine.UDPOption

	// MaxUDPRRRate, when more than 0 and finite, paces the responses (or,
	// as the requester, the requests) this side sends in a UDP
	// request/response test to that many bits/s of payload in all, shared
	// evenly by the streams (a server's --max-udp-rate, for its own tests
	// and those it relays). A result that was paced says so in a warning.
	MaxUDPRRRate float64

	// WireDevice names the network device that carries the test's
	// traffic on this side (the environment record's interface): its
	// counters, its root qdisc's and its driver's offload statistics are
	// read as the window opens and closes, the qdisc again at interval
	// ticks, into SideResult.Wire. Empty: not read.
	WireDevice string

	// RouterQueues are the egresses of a router on the path whose
	// qdiscs the client (Side Local) samples in an RRUL test, beside
	// its own queue, into SideResult.RouterQueues: a routed lab's, which
	// lab run passes (lab.RouterEgresses). None: no router is sampled.
	RouterQueues []RouterQueue

	// AmountReceived, when set with a fixed amount (-n, -k), ends a
	// receiving flow's window when its streams have received the amount,
	// and is called then: for a peer that sends the amount but gives no
	// end of stream until told (iperf3). The flow then drains as usual.
	AmountReceived func()

	// Logger, when set, gets a debug line as each flow's window opens and
	// closes and as its loops finish, with what the samplers took: the
	// phases of a run's wall time (run --log-level debug).
	Logger *slog.Logger

	// seconds, set by RunRRUL, is given each loop Run makes: the RRUL
	// timeline's readings of the receivers' bytes.
	seconds *loadSeconds
	cpu     *cpuMeter // set by Run
	dp      *dataPath // set by Run
}

// testHookWindowOpening, set only by tests, runs as a flow's sampler is
// about to open its window: a stand-in for a host too busy to run the
// sampler on time.
var testHookWindowOpening func(*flow)

// abortDrain bounds the drain after an interrupt.
const abortDrain = time.Second

// Run runs this side of one test and returns what it measured. It returns
// within Omit+Duration+FirstByteGrace+DrainTimeout of its call, and within
// about a second after ctx is cancelled, with what was measured so far
// marked as interrupted. It closes every connection in cfg.Conns. A loop
// that fails ends the run for all loops of this side: a run with a broken
// stream is not a measurement to keep going; the error is returned beside
// the partial result.
func Run(ctx context.Context, cfg Config) (result.SideResult, error) {
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 5 * time.Second
	}
	if cfg.FirstByteGrace <= 0 {
		cfg.FirstByteGrace = 5 * time.Second
	}
	res := result.SideResult{Side: cfg.Side}
	cfg.cpu = newCPUMeter(&cfg)
	cfg.dp = newDataPath(&cfg)
	flows := map[spec.Direction]*flow{}
	var order []*flow
	defer func() {
		// The loops own their sockets (some detach them from the
		// connection); close both.
		for _, f := range order {
			for _, l := range f.loops {
				if s, ok := l.(engine.SocketLoop); ok {
					s.Close()
				}
			}
		}
		for _, c := range cfg.Conns {
			if c.Conn != nil {
				c.Conn.Close()
			}
		}
	}()
	var payload *engine.Payload
	for k, c := range cfg.Conns {
		f := flows[c.Dir]
		if f == nil {
			f = &flow{cfg: &cfg, dir: c.Dir, role: cfg.role(c.Dir)}
			flows[c.Dir] = f
			order = append(order, f)
		}
		if f.role == result.Sender && payload == nil {
			p, err := engine.NewPayload(cfg.Spec.Payload.Kind, cfg.Payload, cfg.Spec.SendSize)
			if err != nil {
				return res, err
			}
			payload = p
		}
		// Asked before the loop takes the socket: some detach it.
		var mp *result.MPTCPStream
		if cfg.Spec.MPTCP && c.Conn != nil {
			mp = &result.MPTCPStream{Active: engine.IsMPTCP(c.Conn)}
		}
		l, err := cfg.newLoop(c, f.role, payload)
		if err != nil {
			return res, fmt.Errorf("stream %d: %w", c.ID, err)
		}
		cfg.limitSender(l, len(f.loops))
		cfg.seconds.add(c.ID, c.Dir, f.role, l)
		if m, ok := l.(engine.WindowMarker); ok && cfg.Spec.Amount() > 0 {
			// A fixed amount's window holds every datagram from the
			// first (see flow.run).
			m.MarkWindow()
		}
		var si engine.SocketInfo // zero for TCP_CRR: no lasting socket
		if s, ok := l.(engine.SocketLoop); ok {
			if si, err = s.Info(); err != nil {
				return res, fmt.Errorf("stream %d: %w", c.ID, err)
			}
		}
		sdp, cpu, err := cfg.dp.apply(k, c, f.role, l)
		if err != nil {
			return res, fmt.Errorf("stream %d: %w", c.ID, err)
		}
		f.loops = append(f.loops, l)
		f.ids = append(f.ids, c.ID)
		f.info = append(f.info, si)
		f.mptcp = append(f.mptcp, mp)
		f.dps = append(f.dps, sdp)
		f.cpus = append(f.cpus, cpu)
	}

	// Request/response loops each keep an OS thread and its P for the whole
	// run (engine.RRClient): give them Ps of their own so that the rest of
	// the process (samplers, the control connection, the other side when
	// both run in one process) keeps the ones it had.
	if n := lockedLoops(cfg); n > 0 {
		defer engine.AddProcs(n)()
	}
	host := newHostWindow(cfg.ProcRoot, len(order), cfg.WireDevice)
	defer host.release()
	for _, f := range order {
		f.host = host
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		errOnce sync.Once
		loopErr error // the first loop failure; it ends the run
	)
	start := time.Now()
	var wg sync.WaitGroup
	for _, f := range order {
		f.loopsDone = make(chan struct{})
		var loops sync.WaitGroup
		for j, l := range f.loops {
			loops.Add(1)
			go func() {
				defer loops.Done()
				if err := runPinned(l, f.cpus[j]); err != nil {
					errOnce.Do(func() { loopErr = fmt.Errorf("%s stream: %w", f.role, err) })
					cancel()
				}
			}()
		}
		go func() { loops.Wait(); close(f.loopsDone) }()
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.run(ctx, start)
		}()
	}
	wg.Wait()

	res.Counters = host.counters
	res.Wire = host.wire
	res.Warnings = host.warnings
	for _, f := range order {
		res.Flows = append(res.Flows, f.result)
		res.Interrupted = res.Interrupted || f.aborted
		if f.warning != "" {
			res.Warnings = append(res.Warnings, f.warning)
		}
	}
	if pacedRequests(order) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s side paced its UDP requests to its limit of %s (serve --max-udp-rate): transaction rates and latencies include that wait",
			cfg.Side, units.FormatBits(cfg.MaxUDPRRRate)))
	}
	if pacedAny(order) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s side paced its UDP responses to its limit of %s (serve --max-udp-rate): transaction rates and latencies include that wait",
			cfg.Side, units.FormatBits(cfg.MaxUDPRRRate)))
	}
	cfg.cpu.result(&res)
	res.DataPath = cfg.dp.result(&res)
	if loopErr != nil {
		res.Error = loopErr.Error()
		return res, loopErr
	}
	return res, nil
}

// runPinned runs l, on a thread bound to cpu unless cpu is negative.
func runPinned(l engine.Loop, cpu int) error {
	if cpu >= 0 {
		_, unpin, err := engine.Pin(cpu)
		if err != nil {
			return fmt.Errorf("-T: %w", err)
		}
		defer unpin()
	}
	return l.Run()
}

// role is what this side does on a flow of direction dir.
func (cfg *Config) role(dir spec.Direction) result.Role {
	switch {
	case cfg.Spec.Kind.RR() && cfg.Side == result.Local:
		return result.Requester
	case cfg.Spec.Kind.RR():
		return result.Responder
	case dir == cfg.Sends:
		return result.Sender
	}
	return result.Receiver
}

// lockedLoops is how many loops of this side hold an OS thread and a P:
// all of them, TCP_CRR's included (the zero-copy TCP modes keep Go's
// poller, and count here anyway).
func lockedLoops(cfg Config) int { return len(cfg.Conns) }

// active reports whether a role drives its flow: it starts at once and
// stops when the window ends; the passive role follows it.
func active(r result.Role) bool { return r == result.Sender || r == result.Requester }

// newLoop builds the engine loop for one connection.
func (cfg *Config) newLoop(c Conn, role result.Role, p *engine.Payload) (engine.Loop, error) {
	t := cfg.Spec
	tcp, _ := c.Conn.(*net.TCPConn)
	udp, _ := c.Conn.(*net.UDPConn)
	switch {
	case t.Kind == spec.TCPCRR && role == result.Requester:
		opts := cfg.CRROptions
		opts.BusyPollMicros = t.BusyPollMicros
		return engine.NewCRRClient(cfg.CRRNetwork, cfg.CRRAddr, opts, t.RequestSize, t.ResponseSize)
	case t.Kind == spec.TCPCRR:
		if cfg.CRR == nil {
			return nil, fmt.Errorf("TCP_CRR server without a listener")
		}
		return engine.NewCRRServer(cfg.CRR, t.RequestSize, t.ResponseSize), nil
	case t.Kind.RR() && c.Conn == nil:
		return nil, fmt.Errorf("%s needs a connection", t.Kind)
	case t.Kind.RR() && role == result.Requester:
		rc, err := engine.NewRRClient(c.Conn, t.RequestSize, t.ResponseSize, t.Burst)
		if err == nil && cfg.MaxUDPRRRate > 0 {
			rc.SetMaxRate(cfg.MaxUDPRRRate / float64(len(cfg.Conns)))
		}
		return rc, err
	case t.Kind.RR():
		rs, err := engine.NewRRServer(c.Conn, t.RequestSize, t.ResponseSize)
		if err == nil && cfg.MaxUDPRRRate > 0 {
			rs.SetMaxRate(cfg.MaxUDPRRRate / float64(len(cfg.Conns)))
		}
		return rs, err
	case t.Kind == spec.UDPStream && udp == nil:
		return nil, fmt.Errorf("UDP_STREAM needs a UDP socket, got %T", c.Conn)
	case t.Kind == spec.UDPStream && role == result.Sender:
		return engine.NewUDPSender(udp, p, t.SendSize, t.RateBitsPerSecond, cfg.UDPOptions...)
	case t.Kind == spec.UDPStream:
		return engine.NewUDPReceiver(udp, t.SendSize, cfg.UDPOptions...)
	case tcp == nil:
		return nil, fmt.Errorf("%s needs a TCP connection, got %T", t.Kind, c.Conn)
	case role == result.Sender:
		return engine.NewTCPSender(tcp, p, t.SendSize)
	}
	return engine.NewTCPReceiver(tcp, t.RecvSize)
}

// limitSender gives the sending loop of the i-th stream of its flow
// (0-based) its share of a fixed amount (-n, -k) and, for TCP, its rate
// (-b; a UDP sender takes its rate when it is made).
func (cfg *Config) limitSender(l engine.Loop, i int) {
	t := cfg.Spec
	switch s := l.(type) {
	case *engine.TCPSender:
		s.SetLimit(t.AmountShare(i))
		s.SetRate(t.RateBitsPerSecond)
	case *engine.UDPSender:
		// The share is whole datagrams (spec.AmountShare).
		s.SetLimit(t.AmountShare(i) / int64(t.SendSize))
	}
}

// flow is one direction on this side: its loops and the sampler that
// measures them.
type flow struct {
	cfg   *Config
	dir   spec.Direction
	role  result.Role
	loops []engine.Loop
	ids   []int
	info  []engine.SocketInfo
	mptcp []*result.MPTCPStream    // per loop, under --mptcp
	dps   []*result.StreamDataPath // each stream's data path record
	cpus  []int                    // the CPU each loop is pinned to, -1 for none

	host      *hostWindow
	loopsDone chan struct{} // closed when every loop of the flow returned
	aborted   bool
	perStream [][]result.Interval
	result    result.Flow
	warning   string // shortWindow's, when the window came out short
	whole     bool   // the window is the loops' whole stream (wholeStream)
}

// sample is the flow's counters at one moment.
type sample struct {
	at     time.Time
	ctr    []engine.Counters
	tcp    []measure.TCPInfo
	hasTCP []bool
}

func (f *flow) take() sample {
	s := sample{
		at:     time.Now(),
		ctr:    make([]engine.Counters, len(f.loops)),
		tcp:    make([]measure.TCPInfo, len(f.loops)),
		hasTCP: make([]bool, len(f.loops)),
	}
	for i, l := range f.loops {
		s.ctr[i] = l.Counters()
	}
	if f.cfg.Spec.Kind.UDP() {
		return s
	}
	for i, l := range f.loops {
		if sl, ok := l.(engine.SocketLoop); ok {
			rc, _ := sl.SyscallConn()
			if ti, err := measure.ReadTCPInfo(rc); err == nil {
				s.tcp[i], s.hasTCP[i] = ti, true
			}
		}
	}
	return s
}

// run is the flow's sampler: it waits for the origin, samples at the
// window's start, at each interval and at its end, then stops or drains
// the loops and fills f.result.
func (f *flow) run(ctx context.Context, start time.Time) {
	sp := f.cfg.Spec
	f.result = result.Flow{Direction: f.dir, Side: f.cfg.Side, Role: f.role}

	var sched scheduleWindow
	origin, ok := f.origin(ctx, start, &sched)
	if !ok {
		// No data came: the host's counters and CPU over the window the
		// schedule gave the flow, so that a reader can tell where the
		// datagrams were lost.
		if sched.closed {
			f.host.fill(sched.nc0, sched.nc1)
			f.cfg.cpu.fill(sched.cpu0, sched.cpu1)
			f.result.ElapsedS = sched.end.Sub(sched.start).Seconds()
			f.result.StartOffsetS = sched.start.Sub(start).Seconds()
		}
		f.host.close()
		f.finish(ctx, nil, nil, true)
		return
	}
	winStart := origin.Add(sp.Omit)
	if !f.wait(ctx, winStart) {
		f.host.close()
		f.finish(ctx, nil, nil, true)
		return
	}
	if testHookWindowOpening != nil {
		testHookWindowOpening(f)
	}
	opening := time.Now()
	f.host.open()
	amount := sp.Amount() > 0
	for _, l := range f.loops {
		if m, ok := l.(engine.WindowMarker); ok && !amount {
			m.MarkWindow()
		}
	}
	s0 := f.take()
	if amount {
		// A fixed amount is measured from the flow's origin (the start,
		// or the first byte) with every byte in it: the loops' counters
		// were zero there (there is no warm-up, spec.Test.CheckAmount).
		s0.at = origin
		for i := range s0.ctr {
			s0.ctr[i] = engine.Counters{}
		}
	}
	f.cfg.cpu.open()
	f.debug("window opened", "dir", f.dir, "role", f.role, "samplers", time.Since(opening))
	f.result.StartOffsetS = s0.at.Sub(start).Seconds()
	end := winStart.Add(sp.Duration)
	// A passive flow whose peer ends a hair before the planned end (its
	// clock started a little later) was not cut short.
	tolerance := max(sp.Duration/100, 20*time.Millisecond)
	prev := s0
	var last sample
	truncated := false
	for k := 1; ; k++ {
		next := end
		if sp.Interval > 0 {
			if t := winStart.Add(time.Duration(k) * sp.Interval); t.Before(end) {
				next = t
			}
		}
		reached := f.wait(ctx, next)
		cur := f.take()
		if sp.Interval > 0 {
			f.interval(k-1, s0, prev, cur)
			if next.Before(end) {
				f.host.tick()
			}
		}
		prev = cur
		if !reached {
			// A fixed amount ends the window when the loops are done.
			truncated = f.aborted || (!amount && end.Sub(cur.at) > tolerance)
			last = cur
			break
		}
		if !next.Before(end) {
			last = cur
			break
		}
	}
	for _, l := range f.loops {
		if e, ok := l.(engine.LatencyLoop); ok {
			e.EndWindow()
		}
	}
	closing := time.Now()
	f.host.close()
	f.cfg.cpu.close()
	f.debug("window closed", "dir", f.dir, "role", f.role, "samplers", time.Since(closing))
	if !amount && !f.aborted {
		f.warning = shortWindow(f.dir, f.role, sp.Duration, last.at.Sub(s0.at), s0.at.Sub(winStart), truncated)
		if w0, w1, ok := f.wholeStream(origin, s0, last); ok {
			f.warning = fmt.Sprintf("%s %s: window opened %d ms late, after the end of stream; the figure is the whole stream instead, %.2f s from its first byte to its end: the CPUs were too busy to run it on time",
				f.dir, f.role, s0.at.Sub(winStart).Milliseconds(), w1.at.Sub(w0.at).Seconds())
			s0, last, truncated, f.whole = w0, w1, false, true
			f.result.StartOffsetS = s0.at.Sub(start).Seconds()
		}
	}
	if f.receivedAmount() && f.cfg.AmountReceived != nil {
		f.cfg.AmountReceived()
	}
	f.finish(ctx, &s0, &last, truncated)
}

// wholeStream is the window of a passive stream flow whose sampler opened
// it only after the data had ended: a host so busy that the sampler's
// goroutine ran later than the sender's whole window measured nothing in
// it, though its loops received every byte (a 0.3 s run under load once
// reported 0 bits/s this way). The flow's figure is then its loops' whole
// stream, from the first byte to the end of stream, both stamped by the
// loops themselves, as netperf's receiver counts (a UDP receiver's
// sequence accounting then is the whole stream's too,
// engine.UDPReceiver.WholeStream). ok is false for any other window.
func (f *flow) wholeStream(origin time.Time, s0, last sample) (from, to sample, ok bool) {
	if f.role != result.Receiver {
		return s0, last, false
	}
	var in, total int64
	var end time.Time
	for i, l := range f.loops {
		fl, isF := l.(engine.Follower)
		et, isE := l.(engine.EndTimer)
		if !isF || !isE || !fl.Ended() {
			return s0, last, false
		}
		end = later(end, et.EndedAt())
		in += last.ctr[i].Bytes - s0.ctr[i].Bytes
		total += last.ctr[i].Bytes
	}
	if in != 0 || total == 0 || !end.After(origin) {
		return s0, last, false
	}
	from = s0
	from.at = origin
	from.ctr = make([]engine.Counters, len(s0.ctr))
	to = last
	to.at = end
	return from, to, true
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// shortWindow says why a flow's window measured less than nine tenths of
// the planned one (measured of planned), or more than eleven tenths,
// or returns "" when it was within a tenth of the plan (or 50 ms).
// Its sampler samples the window's start and end on a goroutine that
// shares the CPUs with the loops: when the host's CPUs are overloaded
// (other processes, or both sides' loops in one process on 2 CPUs), it can
// run hundreds of milliseconds late, and a window opened that late holds
// little or nothing (TestStreamKinds saw a TCP_BIDIR receiver's window
// open 0.94 s late, after its sender had stopped: 0 bytes in 0.00 s, which
// wholeStream now replaces with the whole stream). The bytes of such a
// window are counted right, but over too short a time to be the rate
// asked for, so the result says so. late is how long after
// its planned opening the window's first sample was taken; truncated is
// set when the window ended before its planned end (the peer's end of
// stream came first, for a receiver whose first byte was late).
func shortWindow(dir spec.Direction, role result.Role, planned, measured, late time.Duration, truncated bool) string {
	slack := max(planned/10, 50*time.Millisecond)
	if planned <= 0 || (measured >= planned-slack && measured <= planned+slack) {
		return ""
	}
	var why []string
	if late > 10*time.Millisecond {
		why = append(why, fmt.Sprintf("opened %d ms late", late.Milliseconds()))
	}
	switch end := measured + late - planned; {
	case end > 10*time.Millisecond:
		why = append(why, fmt.Sprintf("closed %d ms late", end.Milliseconds()))
	case end < -10*time.Millisecond && truncated:
		why = append(why, fmt.Sprintf("closed %d ms early, at the sender's end of stream, its first byte having come late", -end.Milliseconds()))
	case end < -10*time.Millisecond:
		why = append(why, fmt.Sprintf("closed %d ms early", -end.Milliseconds()))
	}
	return fmt.Sprintf("%s %s: window %.2f s of %.2f s (%s): the CPUs were too busy to run it on time", dir, role, measured.Seconds(), planned.Seconds(), strings.Join(why, ", "))
}

// watchesAmount reports whether a receiving flow ends its window on the
// amount it received (Config.AmountReceived).
func (f *flow) watchesAmount() bool {
	return f.cfg.AmountReceived != nil && f.role == result.Receiver && f.cfg.Spec.Amount() > 0
}

// receivedAmount reports whether a flow that watches its amount has it.
func (f *flow) receivedAmount() bool {
	if !f.watchesAmount() {
		return false
	}
	var n int64
	for _, l := range f.loops {
		n += l.Counters().Bytes
	}
	return n >= f.cfg.Spec.Amount()
}

// origin returns when this flow's schedule starts, or false when it never
// does (interrupted, or a passive flow that got no data in time). While a
// passive flow waits, it samples the host's counters and CPU at the times
// its window would have opened and closed had the data come at start
// (into sched), for the figures of a window that got nothing.
func (f *flow) origin(ctx context.Context, start time.Time, sched *scheduleWindow) (time.Time, bool) {
	if active(f.role) {
		return start, true
	}
	first := make(chan time.Time, len(f.loops))
	stop := make(chan struct{})
	defer close(stop)
	for _, l := range f.loops {
		fl, ok := l.(engine.Follower)
		if !ok {
			continue
		}
		go func() {
			select {
			case <-fl.FirstByte():
				first <- fl.FirstByteAt()
			case <-stop:
			}
		}()
	}
	sp := f.cfg.Spec
	giveUp := time.NewTimer(sp.Omit + sp.Duration + f.cfg.FirstByteGrace)
	defer giveUp.Stop()
	opens := time.NewTimer(time.Until(start.Add(sp.Omit)))
	defer opens.Stop()
	closes := time.NewTimer(time.Until(start.Add(sp.Omit + sp.Duration)))
	defer closes.Stop()
	for {
		select {
		case t := <-first:
			return t, true
		case <-f.loopsDone:
			// Every loop ended before its first data: nothing to measure.
			return time.Time{}, false
		case <-giveUp.C:
			return time.Time{}, false
		case <-ctx.Done():
			f.aborted = true
			return time.Time{}, false
		case <-opens.C:
			sched.open(f)
		case <-closes.C:
			sched.close(f)
		}
	}
}

// scheduleWindow is what a passive flow samples, while it waits for its
// first data, at the times the schedule gave its window: the host's
// protocol counters and CPU, kept only if the data never comes.
type scheduleWindow struct {
	start, end time.Time
	opened     bool
	closed     bool
	nc0, nc1   hostReading
	cpu0, cpu1 cpuSample
}

func (w *scheduleWindow) open(f *flow) {
	w.start = time.Now()
	w.nc0 = f.host.read()
	w.cpu0 = f.cfg.cpu.take()
	w.opened = true
}

func (w *scheduleWindow) close(f *flow) {
	if !w.opened {
		return
	}
	w.end = time.Now()
	w.nc1 = f.host.read()
	w.cpu1 = f.cfg.cpu.take()
	w.closed = true
}

// wait sleeps until t. It returns false when the run must end early: ctx
// was cancelled or, for a passive flow, every loop reached its end.
func (f *flow) wait(ctx context.Context, t time.Time) bool {
	if ctx.Err() != nil {
		// A sampler behind its schedule still sees the end of the run
		// (one once went on sampling a cancelled test).
		f.aborted = true
		return false
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	var done <-chan struct{}
	if !active(f.role) || f.cfg.Spec.Amount() > 0 {
		// A passive flow ends with its peer's; an active one with a
		// fixed amount when it has sent it.
		done = f.loopsDone
	}
	var poll <-chan time.Time
	if f.watchesAmount() {
		tk := time.NewTicker(amountPoll)
		defer tk.Stop()
		poll = tk.C
	}
	for {
		select {
		case <-tm.C:
			return true
		case <-ctx.Done():
			f.aborted = true
			return false
		case <-done:
			return false
		case <-poll:
			if f.receivedAmount() {
				return false
			}
		}
	}
}

// amountPoll is how often a flow that watches its amount looks at its
// counters (Config.AmountReceived).
const amountPoll = 2 * time.Millisecond

// delta is what stream i moved between two samples.
func (f *flow) delta(i int, a, b sample) result.Interval {
	ca, cb := a.ctr[i], b.ctr[i]
	iv := result.Interval{
		Bytes:    cb.Bytes - ca.Bytes,
		Packets:  cb.Packets - ca.Packets,
		Lost:     cb.Lost - ca.Lost,
		JitterMs: cb.JitterNanos / 1e6,
	}
	if f.role == result.Sender && a.hasTCP[i] && b.hasTCP[i] {
		iv.Retransmits = b.tcp[i].TotalRetrans - a.tcp[i].TotalRetrans
		iv.CwndBytes = b.tcp[i].CwndBytes
		iv.RTTMicros = b.tcp[i].RTTMicros
		iv.NotsentBytes = b.tcp[i].NotsentBytes
	}
	return iv
}

// interval reports the interval between prev and cur.
func (f *flow) interval(index int, s0, prev, cur sample) {
	sum := result.Interval{StartS: prev.at.Sub(s0.at).Seconds(), EndS: cur.at.Sub(s0.at).Seconds()}
	dt := sum.EndS - sum.StartS
	streams := make([]result.StreamInterval, len(f.loops))
	for i := range f.loops {
		iv := f.delta(i, prev, cur)
		iv.StartS, iv.EndS = sum.StartS, sum.EndS
		iv.BitsPerSecond = result.Rate(iv.Bytes, dt)
		if f.cfg.Spec.Kind.RR() {
			iv.TransactionsPerSecond = result.PerSecond(iv.Packets, dt)
		}
		streams[i] = result.StreamInterval{ID: f.ids[i], Interval: iv}
		sum.Bytes += iv.Bytes
		sum.Packets += iv.Packets
		sum.Lost += iv.Lost
		sum.Retransmits += iv.Retransmits
		sum.CwndBytes += iv.CwndBytes
		sum.NotsentBytes += iv.NotsentBytes
		sum.RTTMicros = max(sum.RTTMicros, iv.RTTMicros)
		sum.JitterMs = max(sum.JitterMs, iv.JitterMs)
	}
	sum.BitsPerSecond = result.Rate(sum.Bytes, dt)
	if f.cfg.Spec.Kind.RR() {
		sum.TransactionsPerSecond = result.PerSecond(sum.Packets, dt)
	}
	if !f.cfg.StreamIntervals {
		f.result.Intervals = append(f.result.Intervals, sum)
		if f.perStream == nil {
			f.perStream = make([][]result.Interval, len(f.loops))
		}
		for i, si := range streams {
			f.perStream[i] = append(f.perStream[i], si.Interval)
		}
	}
	if f.cfg.OnInterval != nil {
		f.cfg.OnInterval(result.IntervalReport{Direction: f.dir, Side: f.cfg.Side, Role: f.role, Index: index, Interval: sum, Streams: streams})
	}
}

// finish ends the flow's loops and fills f.result from the window's first
// and last samples (nil when the window never opened). An active loop
// stops and tells its peer it is done; a passive one keeps going until
// that end of stream, so that both sides' totals can be compared exactly.
// debug logs msg at debug level when the side has a logger.
func (f *flow) debug(msg string, args ...any) {
	if l := f.cfg.Logger; l != nil {
		l.Debug(msg, args...)
	}
}

func (f *flow) finish(ctx context.Context, s0, last *sample, truncated bool) {
	if active(f.role) {
		for _, l := range f.loops {
			l.Stop()
		}
		<-f.loopsDone
		for _, l := range f.loops {
			if fi, ok := l.(engine.Finisher); ok {
				fi.Finish()
			}
		}
	} else {
		drain := f.cfg.DrainTimeout
		if ctx.Err() != nil {
			drain = abortDrain
		}
		tm := time.NewTimer(drain)
		select {
		case <-f.loopsDone:
		case <-tm.C:
		case <-ctx.Done():
			// The other side stops too; give its end of stream a moment.
			select {
			case <-f.loopsDone:
			case <-time.After(abortDrain):
			}
		}
		tm.Stop()
		for _, l := range f.loops {
			l.Stop()
		}
		<-f.loopsDone
	}
	f.debug("loops done", "dir", f.dir, "role", f.role)

	r := &f.result
	r.Truncated = truncated
	if r.Intervals == nil {
		r.Intervals = []result.Interval{}
	}
	var hists []*hdrhistogram.Histogram
	for i, l := range f.loops {
		end := l.Counters()
		ss := result.StreamSide{
			ID:                f.ids[i],
			Side:              f.cfg.Side,
			Role:              f.role,
			TotalBytes:        end.Bytes,
			TotalPackets:      end.Packets,
			Complete:          active(f.role) || ended(l),
			SndBuf:            f.info[i].SndBuf,
			RcvBuf:            f.info[i].RcvBuf,
			CongestionControl: f.info[i].CongestionControl,
			MPTCP:             f.mptcp[i],
			DataPath:          f.cfg.dp.finishStream(f.dps[i], l, end),
		}
		if f.perStream != nil {
			ss.Intervals = f.perStream[i]
		}
		if sl, ok := l.(engine.SocketLoop); ok {
			if si, err := sl.Info(); err == nil {
				ss.SndBufEnd, ss.RcvBufEnd = si.SndBuf, si.RcvBuf
			}
			if mp := f.mptcp[i]; mp != nil && mp.Active {
				m := *mp
				if rc, err := sl.SyscallConn(); err == nil && rc != nil {
					if mi, err := measure.ReadMPTCPInfo(rc); err == nil {
						m.Info = &mi
					}
				}
				ss.MPTCP = &m
			}
		}
		if s0 != nil && last != nil {
			a, b := s0.ctr[i], last.ctr[i]
			ss.Bytes = b.Bytes - a.Bytes
			ss.Calls = b.Calls - a.Calls
			ss.Packets = b.Packets - a.Packets
			ss.SendErrors = b.SendErrors - a.SendErrors
			ss.Lost = b.Lost - a.Lost
			ss.OutOfOrder = b.OutOfOrder - a.OutOfOrder
			ss.Duplicates = b.Duplicates - a.Duplicates
			ss.Timeouts = b.Timeouts - a.Timeouts
			ss.JitterMs = b.JitterNanos / 1e6
			if last.hasTCP[i] {
				ti := last.tcp[i]
				ss.TCPInfo = &ti
				if s0.hasTCP[i] {
					ss.Retransmits = last.tcp[i].TotalRetrans - s0.tcp[i].TotalRetrans
					ss.AckedBytes, ss.ReceivedBytes = kernelBytes(f.role, s0.tcp[i], last.tcp[i])
					// A kernel before 4.9 reports no busy time at all.
					if a, b := s0.tcp[i], last.tcp[i]; f.role == result.Sender && b.BusyTimeMicros > 0 {
						ss.TCPLimited = &result.TCPLimited{
							BusyMicros:          b.BusyTimeMicros - a.BusyTimeMicros,
							RwndLimitedMicros:   b.RwndLimitedMicros - a.RwndLimitedMicros,
							SndbufLimitedMicros: b.SndbufLimitedMicros - a.SndbufLimitedMicros,
						}
					}
				}
			}
			if f.role == result.Sender && f.cfg.Spec.Kind.UDP() {
				ss.SeqFirst = uint64(a.Packets)
			}
		}
		if w, ok := l.(engine.UDPWindowLoop); ok && s0 != nil {
			uw := w.Window()
			if f.whole {
				uw = w.WholeStream()
			}
			ss.SeqFirst, ss.SeqUnique = uw.First, uw.Unique
		}
		if ll, ok := l.(engine.LatencyLoop); ok && s0 != nil {
			h := ll.Latency()
			lat := stats.LatencyOf(h)
			ss.Latency = &lat
			hists = append(hists, h)
		}
		r.Bytes += ss.Bytes
		r.Streams = append(r.Streams, ss)
	}
	if len(hists) > 0 {
		all := engine.NewLatencyHistogram()
		for _, h := range hists {
			all.Merge(h)
		}
		lat := stats.LatencyOf(all)
		r.Latency = &lat
	}
	if s0 != nil && last != nil {
		r.ElapsedS = last.at.Sub(s0.at).Seconds()
	}
}

// ended reports whether a passive loop saw its peer's end of stream.
func ended(l engine.Loop) bool {
	fl, ok := l.(engine.Follower)
	return ok && fl.Ended()
}

// pacedRequests reports whether a request/response client's requests
// waited for their rate limit (engine.RRClient.SetMaxRate).
func pacedRequests(flows []*flow) bool {
	for _, f := range flows {
		for _, l := range f.loops {
			if p, ok := l.(interface{ PacedRequests() bool }); ok && p.PacedRequests() {
				return true
			}
		}
	}
	return false
}

// pacedAny reports whether a loop's sending waited for its rate limit
// (engine.RRServer.SetMaxRate).
func pacedAny(flows []*flow) bool {
	for _, f := range flows {
		for _, l := range f.loops {
			if p, ok := l.(interface{ Paced() bool }); ok && p.Paced() {
				return true
			}
		}
	}
	return false
}

// kernelBytes is a TCP stream's payload over the window as its kernel
// counted it, for the wire's figures: what the peer acknowledged on a
// sender, what arrived in sequence on a receiver; nil where the kernel
// does not count it (tcpi_bytes_acked and bytes_received, Linux 4.1)
// and for the other roles.
func kernelBytes(role result.Role, a, b measure.TCPInfo) (acked, received *int64) {
	switch {
	case role == result.Sender && b.BytesAcked > 0:
		n := b.BytesAcked - a.BytesAcked
		return &n, nil
	case role == result.Receiver && b.BytesReceived > 0:
		n := b.BytesReceived - a.BytesReceived
		return nil, &n
	}
	return nil, nil
}
