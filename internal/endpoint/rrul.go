package endpoint

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"time"

	"wirespeed/internal/engine"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// Probes are the probe sockets of one side of an RRUL test: the client's
// UDP probe socket and where its TCP probes connect, or the server's UDP
// socket that echoes and the listener that answers TCP probes, for the peer's probes alone.
type Probes struct {
	// The client's: the proven UDP probe socket, and the TCP probe
	// listener's address with the options of each probe's socket.
	UDP        *net.UDPConn
	TCPNetwork string
	TCPAddr    string
	TCPOptions engine.Options

	// The server's: the proven UDP probe socket, the most echoes a second
	// it sends, and the TCP probe listener.
	Echo             *net.UDPConn
	EchoMaxPerSecond float64
	Listener         *net.TCPListener

	// Peer is the other side's address: the server's probes answer it
	// alone, and each side samples the qdisc of the device toward it.
	Peer netip.Addr

	// Live, when not nil, is given the client's probers and the load's
	// start as they come, for the interval lines (LiveProbes).
	Live *LiveProbes
}

// LiveProbes reads the client's probes of an RRUL run while it runs: the
// interval lines show the round trips of each second's answers beside
// the load's throughput. RunRRUL fills it; it is safe for concurrent use.
type LiveProbes struct {
	mu        sync.Mutex
	probers   []interface{ Samples() []engine.ProbeSample }
	origin    time.Time
	loadStart time.Time
}

func (l *LiveProbes) start(origin time.Time, probers ...interface{ Samples() []engine.ProbeSample }) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.origin, l.probers = origin, probers
}

func (l *LiveProbes) loadStarted(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loadStart = t
}

// Answered is the round trips, in milliseconds, of the probes (UDP and
// TCP) whose answers came from fromS to toS seconds after the load
// started, as an interval's StartS and EndS count: none before the load
// started. An answer still on its way is not in it.
func (l *LiveProbes) Answered(fromS, toS float64) []float64 {
	l.mu.Lock()
	origin, loadStart, probers := l.origin, l.loadStart, l.probers
	l.mu.Unlock()
	if loadStart.IsZero() {
		return nil
	}
	off := loadStart.Sub(origin)
	from, to := off+seconds(fromS), off+seconds(toS)
	var ms []float64
	for _, p := range probers {
		for _, s := range p.Samples() {
			if s.RTTNanos < 0 {
				continue
			}
			at := time.Duration(s.SentNanos + s.RTTNanos)
			if at >= from && at < to {
				ms = append(ms, float64(s.RTTNanos)/1e6)
			}
		}
	}
	return ms
}

// answerLinger is how long the server keeps answering probes after its
// load ended: the client's last probes are still on their way.
const answerLinger = time.Second

// RunRRUL runs one side of an RRUL test: the probes (client) or their
// answers (server) from its call, the idle phase of cfg.Spec.RRUL.Idle
// with the probes alone, then the load (Run with cfg), then the probes'
// end. An interrupt in either phase keeps what was measured: the client's
// result holds its probes and the phases' times whatever way it ends. It
// returns within Run's bound plus the idle phase and about two seconds.
func RunRRUL(ctx context.Context, cfg Config, p Probes) (result.SideResult, error) {
	sp := cfg.Spec
	origin := time.Now()
	// The probes' own context: they outlive an interrupted load long
	// enough to collect the answers of those already sent.
	probeCtx, stopProbes := context.WithCancel(context.Background())
	defer stopProbes()
	var wg sync.WaitGroup
	samplesFor := func(iv time.Duration) int { return int((sp.Length()+10*time.Second)/iv) + 1 }
	var udp *engine.UDPProber
	var tcp *engine.TCPProber
	if p.UDP != nil {
		udp = engine.NewUDPProber(p.UDP, sp.RRUL.UDPProbeInterval, origin, samplesFor(sp.RRUL.UDPProbeInterval))
		wg.Go(func() { udp.Run(probeCtx) })
	}
	var tcpErr error
	if p.TCPAddr != "" {
		tcp = engine.NewTCPProber(p.TCPNetwork, p.TCPAddr, p.TCPOptions, sp.RRUL.TCPProbeInterval, origin, samplesFor(sp.RRUL.TCPProbeInterval))
		wg.Go(func() { tcpErr = tcp.Run(probeCtx) })
	}
	if p.Live != nil {
		var ps []interface{ Samples() []engine.ProbeSample }
		if udp != nil {
			ps = append(ps, udp)
		}
		if tcp != nil {
			ps = append(ps, tcp)
		}
		p.Live.start(origin, ps...)
	}
	if p.Echo != nil {
		echo := engine.NewUDPEchoer(p.Echo, p.EchoMaxPerSecond)
		wg.Go(func() { echo.Run(probeCtx) })
	}
	queues, queuesDone := startQueueSampler(probeCtx, sp, p.Peer, origin)
	// The client alone samples a lab router's queues: the server, in the
	// lab's other host, would sample the same ones again.
	var routers []*queueSampler
	routersDone := func() {}
	if cfg.Side == result.Local && len(cfg.RouterQueues) > 0 {
		routers, routersDone = startRouterSamplers(probeCtx, sp, cfg.RouterQueues, origin)
	}
	if p.Listener != nil {
		srv := engine.NewTCPProbeServer(p.Listener, p.Peer)
		wg.Go(func() { srv.Run(probeCtx) })
	}

	var (
		res                result.SideResult
		err                error
		loadStart, loadEnd time.Time
	)
	idle := time.NewTimer(time.Until(origin.Add(sp.RRUL.Idle)))
	select {
	case <-idle.C:
		loadStart = time.Now()
		if p.Live != nil {
			p.Live.loadStarted(loadStart)
		}
		secs := &loadSeconds{step: TimelineStep(sp)}
		cfg.seconds = secs
		stopSecs := secs.run(loadStart, int(sp.Length()/secs.step)+16)
		res, err = Run(ctx, cfg)
		stopSecs()
		res.LoadSeconds = secs.record()
		loadEnd = loadEndOf(loadStart, res.Flows)
	case <-ctx.Done():
		idle.Stop()
		res = result.SideResult{Side: cfg.Side, Interrupted: true}
		for _, c := range cfg.Conns {
			if c.Conn != nil {
				c.Conn.Close()
			}
		}
	}
	if cfg.Side == result.Remote {
		// Answer the client's last probes before stopping.
		tm := time.NewTimer(answerLinger)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
		}
	}
	stopProbes()
	wg.Wait()
	queuesDone()
	routersDone()
	var ls, le float64
	if !loadStart.IsZero() {
		ls, le = loadStart.Sub(origin).Seconds(), loadEnd.Sub(origin).Seconds()
	}
	res.Queue = queues.record(ls, le)
	for _, r := range routers {
		res.RouterQueues = append(res.RouterQueues, *r.record(ls, le))
	}

	if udp != nil || tcp != nil {
		rec := &result.ProbeRecord{}
		rec.LoadStartS, rec.LoadEndS = ls, le
		if udp != nil {
			rec.UDP = points(udp.Samples())
		}
		if tcp != nil {
			rec.TCP = points(tcp.Samples())
			rec.TCPSkipped = tcp.Skipped.Load()
		}
		res.Probes = rec
	}
	if err == nil && tcpErr != nil && ctx.Err() == nil {
		res.Warnings = append(res.Warnings, "TCP probes: "+tcpErr.Error())
	}
	return res, err
}

// TimelineStep is the step of an RRUL run's timeline
// (summary.under_load.intervals): the spec's interval, or a second
// without one (-i 0).
func TimelineStep(t spec.Test) time.Duration {
	if t.Interval > 0 {
		return t.Interval
	}
	return time.Second
}

// loadEndOf is when the last of a side's flows closed its window: each
// opens StartOffsetS after the load started and lasts ElapsedS; the
// load's start itself when there are none.
func loadEndOf(loadStart time.Time, flows []result.Flow) time.Time {
	end := loadStart
	for _, f := range flows {
		if e := loadStart.Add(seconds(f.StartOffsetS + f.ElapsedS)); e.After(end) {
			end = e
		}
	}
	return end
}

func points(ss []engine.ProbeSample) []result.ProbePoint {
	out := make([]result.ProbePoint, len(ss))
	for i, s := range ss {
		p := result.ProbePoint{T: float64(s.SentNanos) / 1e9, RTTMs: float64(s.RTTNanos) / 1e6, Lost: s.RTTNanos < 0}
		if p.Lost {
			p.RTTMs = 0
		}
		if s.ConnectNanos > 0 {
			p.ConnectMs = float64(s.ConnectNanos) / 1e6
		}
		out[i] = p
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
