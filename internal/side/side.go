// Package side runs one side of a test: it starts the engine loops on this
// side's data connections, samples their counters and TCP_INFO on the
// agreed schedule with the monotonic clock, stops the senders when the
// window ends, drains the receivers, and returns a run.SideResult. The
// client and the server both run exactly this code for their side.
//
// The schedule of a direction starts at its origin: for the sender, when
// Run is called (the moment it starts sending); for the receiver, when the
// first byte of that direction arrives. Anchoring the receiver on its first
// byte keeps the two windows one one-way delay apart, whatever the round
// trip of the control connection. The window opens Omit after the origin and
// closes Duration later; intervals are scheduled against absolute times, so
// they do not drift.
package side

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"wirespeed/internal/engine"
	"wirespeed/internal/measure"
	"wirespeed/internal/run"
	"wirespeed/internal/spec"
)

// Conn is one established data connection of this side.
type Conn struct {
	ID   int
	Dir  spec.Direction
	Conn *net.TCPConn
}

// Config is what Run needs.
type Config struct {
	Spec  spec.Test
	Side  run.Side
	Sends spec.Direction // the direction this side sends in
	Conns []Conn
	// Payload is the file's content when Spec.Payload.Kind is "file".
	Payload []byte
	// OnInterval, when set, is called with each interval of each flow as it
	// ends. It may be called from several goroutines at once and must not
	// block for long.
	OnInterval func(run.IntervalReport)
	// DrainTimeout bounds how long a receiver keeps reading after its
	// window to reach the sender's end of stream. Default 5s.
	DrainTimeout time.Duration
	// FirstByteGrace is how long past the planned end a receiver waits for
	// its first byte before giving up on an empty window. Default 5s.
	FirstByteGrace time.Duration
	// ProcRoot is where /proc is mounted, for the CPU figures the spec
	// may ask for; default measure.DefaultProcRoot. See cpu.go.
	ProcRoot string

	cpu *cpuMeter // set by Run
}

// abortDrain bounds the drain after an interrupt.
const abortDrain = time.Second

// Run runs this side of one test and returns what it measured. It returns
// within Omit+Duration+FirstByteGrace+DrainTimeout of its call, and within
// about a second after ctx is cancelled, with what was measured so far
// marked as interrupted. It closes every connection in cfg.Conns. A stream
// that fails ends the run for all streams of this side: a run with a
// broken stream is not a measurement to keep going; the error is returned
// beside the partial result.
func Run(ctx context.Context, cfg Config) (run.SideResult, error) {
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 5 * time.Second
	}
	if cfg.FirstByteGrace <= 0 {
		cfg.FirstByteGrace = 5 * time.Second
	}
	res := run.SideResult{Side: cfg.Side}
	cfg.cpu = newCPUMeter(&cfg)
	defer func() {
		for _, c := range cfg.Conns {
			c.Conn.Close()
		}
	}()

	var payload *engine.Payload
	flows := map[spec.Direction]*flow{}
	var order []*flow
	for _, c := range cfg.Conns {
		f := flows[c.Dir]
		if f == nil {
			role := run.Receiver
			if c.Dir == cfg.Sends {
				role = run.Sender
			}
			f = &flow{cfg: &cfg, dir: c.Dir, role: role}
			flows[c.Dir] = f
			order = append(order, f)
		}
		st, err := engine.NewStream(c.Conn)
		if err != nil {
			return res, err
		}
		si, err := engine.Info(c.Conn)
		if err != nil {
			return res, fmt.Errorf("stream %d: %w", c.ID, err)
		}
		f.streams = append(f.streams, st)
		f.ids = append(f.ids, c.ID)
		f.info = append(f.info, si)
		if f.role == run.Sender && payload == nil {
			p, err := engine.NewPayload(cfg.Spec.Payload.Kind, cfg.Payload, cfg.Spec.SendSize)
			if err != nil {
				return res, err
			}
			payload = p
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		errOnce   sync.Once
		streamErr error // the first stream failure; it ends the run
	)
	start := time.Now()
	var wg sync.WaitGroup
	for _, f := range order {
		f.loopsDone = make(chan struct{})
		var loops sync.WaitGroup
		for _, st := range f.streams {
			loops.Add(1)
			go func() {
				defer loops.Done()
				var err error
				if f.role == run.Sender {
					err = st.Send(payload, cfg.Spec.SendSize)
				} else {
					err = st.Receive(cfg.Spec.RecvSize)
				}
				if err != nil {
					errOnce.Do(func() { streamErr = fmt.Errorf("%s stream: %w", f.role, err) })
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

	interrupted := false
	for _, f := range order {
		res.Flows = append(res.Flows, f.result)
		interrupted = interrupted || f.aborted
	}
	res.Interrupted = interrupted
	cfg.cpu.result(&res)
	if streamErr != nil {
		res.Error = streamErr.Error()
		return res, streamErr
	}
	return res, nil
}

// flow is one direction on this side: its streams, their loops and the
// sampler that measures them.
type flow struct {
	cfg     *Config
	dir     spec.Direction
	role    run.Role
	streams []*engine.Stream
	ids     []int
	info    []engine.SocketInfo

	loopsDone chan struct{} // closed when every loop of the flow returned
	aborted   bool
	perStream [][]run.Interval
	result    run.Flow
}

// sample is the flow's counters at one moment.
type sample struct {
	at     time.Time
	bytes  []int64
	calls  []int64
	tcp    []run.TCPInfo
	hasTCP bool
}

func (f *flow) take() sample {
	s := sample{
		at:    time.Now(),
		bytes: make([]int64, len(f.streams)),
		calls: make([]int64, len(f.streams)),
		tcp:   make([]run.TCPInfo, len(f.streams)),
	}
	for i, st := range f.streams {
		s.bytes[i] = st.Bytes()
		s.calls[i] = st.Calls()
	}
	s.hasTCP = true
	for i, st := range f.streams {
		ti, err := measure.TCPInfo(st.RawConn())
		if err != nil {
			s.hasTCP = false
			continue
		}
		s.tcp[i] = ti
	}
	return s
}

// run is the flow's sampler: it waits for the origin, samples at the
// window's start, at each interval and at its end, then stops or drains
// the loops and fills f.result.
func (f *flow) run(ctx context.Context, start time.Time) {
	sp := f.cfg.Spec
	f.result = run.Flow{Direction: f.dir, Side: f.cfg.Side, Role: f.role}

	origin, ok := f.origin(ctx, start)
	if !ok {
		f.finish(ctx, nil, nil, true)
		return
	}
	winStart := origin.Add(sp.Omit)
	if !f.wait(ctx, winStart) {
		f.finish(ctx, nil, nil, true)
		return
	}
	s0 := f.take()
	f.cfg.cpu.open()
	f.result.StartOffsetS = s0.at.Sub(start).Seconds()
	end := winStart.Add(sp.Duration)
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
		}
		prev = cur
		if !reached {
			truncated = true
			last = cur
			break
		}
		if !next.Before(end) {
			last = cur
			break
		}
	}
	f.cfg.cpu.close()
	f.finish(ctx, &s0, &last, truncated)
}

// origin returns when this flow's schedule starts, or false when it never
// does (interrupted, or a receiver that got no byte in time).
func (f *flow) origin(ctx context.Context, start time.Time) (time.Time, bool) {
	if f.role == run.Sender {
		return start, true
	}
	first := make(chan time.Time, len(f.streams))
	stop := make(chan struct{})
	defer close(stop)
	for _, st := range f.streams {
		go func() {
			select {
			case <-st.FirstByte():
				first <- st.FirstByteAt()
			case <-stop:
			}
		}()
	}
	sp := f.cfg.Spec
	giveUp := time.NewTimer(sp.Omit + sp.Duration + f.cfg.FirstByteGrace)
	defer giveUp.Stop()
	select {
	case t := <-first:
		return t, true
	case <-f.loopsDone:
		// Every stream ended before its first byte: nothing to measure.
		return time.Time{}, false
	case <-giveUp.C:
		return time.Time{}, false
	case <-ctx.Done():
		return time.Time{}, false
	}
}

// wait sleeps until t. It returns false when the run must end early: ctx
// was cancelled or, for a receiver, every stream reached end of stream.
func (f *flow) wait(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	var done <-chan struct{}
	if f.role == run.Receiver {
		done = f.loopsDone
	}
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		f.aborted = true
		return false
	case <-done:
		return false
	}
}

// interval reports the interval between prev and cur.
func (f *flow) interval(index int, s0, prev, cur sample) {
	sum := run.Interval{StartS: prev.at.Sub(s0.at).Seconds(), EndS: cur.at.Sub(s0.at).Seconds()}
	streams := make([]run.StreamInterval, len(f.streams))
	for i := range f.streams {
		iv := run.Interval{StartS: sum.StartS, EndS: sum.EndS, Bytes: cur.bytes[i] - prev.bytes[i]}
		if f.role == run.Sender && cur.hasTCP && prev.hasTCP {
			iv.Retransmits = cur.tcp[i].TotalRetrans - prev.tcp[i].TotalRetrans
			iv.CwndBytes = cur.tcp[i].CwndBytes
			iv.RTTMicros = cur.tcp[i].RTTMicros
		}
		iv.BitsPerSecond = run.Rate(iv.Bytes, iv.EndS-iv.StartS)
		streams[i] = run.StreamInterval{ID: f.ids[i], Interval: iv}
		sum.Bytes += iv.Bytes
		sum.Retransmits += iv.Retransmits
		sum.CwndBytes += iv.CwndBytes
		sum.RTTMicros = max(sum.RTTMicros, iv.RTTMicros)
	}
	sum.BitsPerSecond = run.Rate(sum.Bytes, sum.EndS-sum.StartS)
	f.result.Intervals = append(f.result.Intervals, sum)
	if f.perStream == nil {
		f.perStream = make([][]run.Interval, len(f.streams))
	}
	for i, si := range streams {
		f.perStream[i] = append(f.perStream[i], si.Interval)
	}
	if f.cfg.OnInterval != nil {
		f.cfg.OnInterval(run.IntervalReport{Direction: f.dir, Side: f.cfg.Side, Role: f.role, Index: index, Interval: sum, Streams: streams})
	}
}

// finish ends the flow's loops and fills f.result from the window's first
// and last samples (nil when the window never opened). A sender stops and
// sends its end of stream; a receiver drains up to the sender's end of
// stream so that both sides' totals can be compared exactly.
func (f *flow) finish(ctx context.Context, s0, last *sample, truncated bool) {
	if f.role == run.Sender {
		for _, st := range f.streams {
			st.Stop()
		}
		<-f.loopsDone
		for _, st := range f.streams {
			st.CloseWrite()
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
		for _, st := range f.streams {
			st.Stop()
		}
		<-f.loopsDone
	}

	r := &f.result
	r.Truncated = truncated
	if r.Intervals == nil {
		r.Intervals = []run.Interval{}
	}
	for i, st := range f.streams {
		ss := run.StreamSide{
			ID:                f.ids[i],
			Side:              f.cfg.Side,
			Role:              f.role,
			TotalBytes:        st.Bytes(),
			Complete:          f.role == run.Sender || st.EOF(),
			SndBuf:            f.info[i].SndBuf,
			RcvBuf:            f.info[i].RcvBuf,
			CongestionControl: f.info[i].CongestionControl,
		}
		if f.perStream != nil {
			ss.Intervals = f.perStream[i]
		}
		if end, err := engine.Info(st.Conn()); err == nil {
			ss.SndBufEnd, ss.RcvBufEnd = end.SndBuf, end.RcvBuf
		}
		if s0 != nil && last != nil {
			ss.Bytes = last.bytes[i] - s0.bytes[i]
			ss.Calls = last.calls[i] - s0.calls[i]
			if last.hasTCP {
				ti := last.tcp[i]
				ss.TCPInfo = &ti
				if s0.hasTCP {
					ss.Retransmits = last.tcp[i].TotalRetrans - s0.tcp[i].TotalRetrans
				}
			}
		}
		r.Bytes += ss.Bytes
		r.Streams = append(r.Streams, ss)
	}
	if s0 != nil && last != nil {
		r.ElapsedS = last.at.Sub(s0.at).Seconds()
	}
}
