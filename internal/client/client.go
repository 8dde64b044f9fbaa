// Package client runs tests against one wirespeed server: it opens the
// control connection, says hello, and for each run sends the spec, opens
// fresh data connections, runs its own side, collects the server's side
// and joins both into a result.Result.
package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/endpoint"
	"wirespeed/internal/engine"
	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// MaxPayloadFile bounds a --payload file: it travels to the server in one
// control frame when the server sends.
const MaxPayloadFile = 1 << 20

// Config holds the client's settings.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// IPVersion restricts the address family: 0 for either, 4 or 6.
	IPVersion int
	Tool      string // version string for the hello
	Hostname  string
	// OnInterval, when set, receives each interval of each direction as
	// soon as the receiver's and the sender's halves are both in. It is
	// called from one goroutine at a time.
	OnInterval func(result.Tick)
	Logger     *slog.Logger
	// HandshakeTimeout bounds the hello, and the connect when
	// ConnectTimeout is not set; default 5s.
	HandshakeTimeout time.Duration
	// ConnectTimeout bounds the control connection's TCP connect alone
	// (iperf3's --connect-timeout); 0 means HandshakeTimeout.
	ConnectTimeout time.Duration
	// ProcRoot is where /proc is mounted, for the CPU figures a spec may
	// ask for; default measure.DefaultProcRoot.
	ProcRoot string

	// MaxUDPRRRate, when more than 0, paces this client's UDP_RR requests
	// to that many bits/s in all: a relaying server's --max-udp-rate.
	MaxUDPRRRate float64

	// RouterQueues are the egresses of a router on the path, whose
	// qdiscs an RRUL run samples (endpoint.Config.RouterQueues): a
	// routed lab's, which lab run passes.
	RouterQueues []endpoint.RouterQueue

	// RelayOnly says the connection only asks the server to relay tests
	// (Relay), as a mesh's runner does for a pair it is not in: no result
	// carries this side's idle CPU baseline, so Dial does not wait for
	// one; a Run on such a client has none in its record.
	RelayOnly bool

	// BindAddr and BindDev are where the control connection leaves from
	// (-B, --bind-dev; the data connections take theirs from the spec):
	// the zero Addr and "" for wherever the kernel routes it.
	BindAddr netip.Addr
	BindDev  string

	// Authentication and TLS: see auth.go and tls.go.
	Security
}

// Client is a control connection to one server.
type Client struct {
	cfg     Config
	log     *slog.Logger
	cc      *control.Conn
	server  control.Hello
	host    string
	network string
	broken  bool
	payload struct {
		path    string
		content []byte
	}
	probe *net.UDPConn // an RRUL run's UDP probe socket (rrul.go)
	env   envCache     // this side's environment record (env.go)
}

// Dial connects to the server and exchanges hellos. The errors say what
// went wrong in words a user can act on: unreachable, not a wirespeed
// server, incompatible version.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 5 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("server address %q: %w", cfg.Addr, err)
	}
	network := "tcp"
	switch cfg.IPVersion {
	case 4:
		network = "tcp4"
	case 6:
		network = "tcp6"
	}
	connectTimeout := cfg.ConnectTimeout
	if connectTimeout <= 0 {
		connectTimeout = cfg.HandshakeTimeout
	}
	d := engine.ControlDialer(engine.Options{LocalAddr: cfg.BindAddr, BindDev: cfg.BindDev}, connectTimeout)
	c, err := d.DialContext(ctx, network, cfg.Addr)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			if cfg.BindDev != "" {
				return nil, fmt.Errorf("connect to %s: no answer within %v (the connect timeout) through --bind-dev %s: is the server reachable through that device (ip route get)? %w",
					cfg.Addr, connectTimeout, cfg.BindDev, err)
			}
			return nil, fmt.Errorf("connect to %s: no answer within %v (the connect timeout): the host is down, a firewall drops the port, or the server cannot accept; give it longer with --connect-timeout: %w",
				cfg.Addr, connectTimeout, err)
		}
		switch {
		case cfg.BindAddr.IsValid() && errors.Is(err, syscall.EADDRNOTAVAIL):
			return nil, fmt.Errorf("connect to %s: %w: is %s an address of this host (-B)?", cfg.Addr, err, cfg.BindAddr)
		case cfg.BindDev != "" && (errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH)):
			return nil, fmt.Errorf("connect to %s: %w: the server is unreachable through --bind-dev %s; name the device its route goes through (ip route get)", cfg.Addr, err, cfg.BindDev)
		}
		return nil, fmt.Errorf("connect to %s: %w%s", cfg.Addr, err, dialHint(err))
	}
	log.Debug("control connection open", "server", cfg.Addr)
	if c, err = cfg.startTLS(ctx, c, host); err != nil {
		return nil, err
	}
	cc := control.NewConn(c, 0)
	cl := &Client{cfg: cfg, log: log, cc: cc, host: host, network: network}
	mine := control.NewHello(cfg.Tool, cfg.Hostname)
	nonce := cl.offerAuth(&mine)
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	werr := cc.WriteMagic()
	if werr == nil {
		werr = cc.Send(control.TypeHello, mine)
	}
	// Read the peer's first bytes even when the hello could not be sent: a
	// server of another protocol may have answered and hung up already, and
	// what it said is the better diagnosis.
	if err := cc.ReadMagic(cfg.HandshakeTimeout); err != nil {
		cc.Close()
		if werr != nil && !errors.Is(err, control.ErrNotWirespeed) {
			return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, werr)
		}
		return nil, fmt.Errorf("%s: %w", cfg.Addr, err)
	}
	if werr != nil {
		cc.Close()
		return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, werr)
	}
	if err := cc.Expect(control.TypeHello, &cl.server, cfg.HandshakeTimeout); err != nil {
		cc.Close()
		return nil, fmt.Errorf("%s: %w", cfg.Addr, err)
	}
	version, err := control.Negotiate(mine, cl.server)
	if err != nil {
		cc.Close()
		return nil, fmt.Errorf("%s: %w", cfg.Addr, err)
	}
	if err := cl.authenticate(version, nonce); err != nil {
		cc.Close()
		return nil, fmt.Errorf("%s: %w", cfg.Addr, err)
	}
	c.SetDeadline(time.Time{})
	log.Debug("hello exchanged", "server", cfg.Addr, "version", version)
	// The idle CPU baseline, once per connection: the server takes its
	// own at the same moment, and neither has started a test.
	if !cfg.RelayOnly {
		cl.idleBaseline(ctx)
		log.Debug("idle baseline taken")
	}
	return cl, nil
}

// dialHint says what a failed connect usually means.
func dialHint(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "; nothing listens there, or a firewall rejects the port (a Kubernetes NetworkPolicy does): start `wirespeed serve` on that host, give the port it listens on, or let this host through"
	case errors.As(err, &ne) && ne.Timeout():
		return "; no answer: the host is down or a firewall drops the port"
	}
	return ""
}

// Server returns the server's hello.
func (c *Client) Server() control.Hello { return c.server }

// Close says bye, waits a moment for the server to release its test slot
// and answer bye, and closes the control connection. Waiting makes a
// second client started right after this one find the server free.
func (c *Client) Close() error {
	if !c.broken {
		if c.cc.Send(control.TypeBye, struct{}{}) == nil {
			c.cc.Expect(control.TypeBye, nil, 2*time.Second)
		}
		c.log.Debug("bye exchanged")
	}
	return c.cc.Close()
}

// Run runs t once over fresh data connections and returns the joined
// result. When ctx is cancelled mid-run it asks the server to stop, and
// returns what both sides measured, marked as interrupted, with a nil
// error. A run that cannot start returns an error and no result.
func (c *Client) Run(ctx context.Context, t spec.Test) (result.Result, error) {
	if c.broken {
		return result.Result{}, errors.New("control connection is unusable after an earlier failure")
	}
	if err := t.Validate(); err != nil {
		return result.Result{}, fmt.Errorf("%w: %v", control.ErrInvalid, err)
	}
	if t.MPTCP {
		root := c.cfg.ProcRoot
		if root == "" {
			root = measure.DefaultProcRoot
		}
		if err := engine.CheckMPTCP(root); err != nil {
			return result.Result{}, fmt.Errorf("--mptcp on this host: %w", err)
		}
	}
	req := control.TestRequest{Spec: t, StreamedIntervals: true}
	var content []byte
	if t.Payload.Kind == spec.PayloadFile {
		b, err := c.loadPayload(t.Payload.Path)
		if err != nil {
			return result.Result{}, err
		}
		content = b
		if dirsInclude(t, spec.ServerToClient) {
			req.Payload = b
		}
	}
	if err := c.cc.Send(control.TypeTest, req); err != nil {
		c.broken = true
		return result.Result{}, err
	}
	// The environment record (collected at the connection's first run)
	// while the server sets up and the data connections open, rather
	// than after: measure takes it (localEnv waits for this one).
	go c.localEnv(ctx)
	var acc control.Accepted
	if err := c.cc.Expect(control.TypeAccepted, &acc, 10*time.Second); err != nil {
		var re *control.RemoteError
		if !errors.As(err, &re) {
			c.broken = true
		}
		return result.Result{}, c.explain(err)
	}
	if err := checkAccepted(t, acc); err != nil {
		c.broken = true
		return result.Result{}, c.explain(err)
	}
	c.log.Debug("test accepted", "test", t.Kind)

	conns, err := c.dialStreams(ctx, t, acc)
	if err != nil {
		c.broken = true
		return result.Result{}, err
	}
	if t.Kind == spec.RRUL {
		if err := c.dialProbe(ctx, t, acc); err != nil {
			endpoint.CloseAll(conns)
			c.broken = true
			return result.Result{}, err
		}
		defer c.closeProbe()
	}
	c.log.Debug("data connections open", "streams", len(conns))
	if err := c.cc.Expect(control.TypeReady, nil, 15*time.Second); err != nil {
		endpoint.CloseAll(conns)
		c.broken = true
		return result.Result{}, c.explain(err)
	}
	c.log.Debug("server ready")
	return c.measure(ctx, t, acc, conns, content)
}

func dirsInclude(t spec.Test, d spec.Direction) bool {
	for _, x := range t.Directions() {
		if x == d {
			return true
		}
	}
	return false
}

func (c *Client) loadPayload(path string) ([]byte, error) {
	if c.payload.path == path {
		return c.payload.content, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("payload file: %w", err)
	}
	defer f.Close()
	b := make([]byte, MaxPayloadFile+1)
	n, _ := f.Read(b)
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			break
		}
	}
	switch {
	case n == 0:
		return nil, fmt.Errorf("payload file %s is empty", path)
	case n > MaxPayloadFile:
		return nil, fmt.Errorf("payload file %s is larger than %d bytes; use a smaller sample of the data", path, MaxPayloadFile)
	}
	c.payload.path, c.payload.content = path, b[:n]
	return c.payload.content, nil
}

// explain turns protocol errors into what the user should know.
func (c *Client) explain(err error) error {
	switch {
	case errors.Is(err, control.ErrBusy):
		return fmt.Errorf("server %s is busy: %w", c.cfg.Addr, err)
	case errors.Is(err, control.ErrInvalid):
		return fmt.Errorf("server %s refused the test: %w", c.cfg.Addr, err)
	}
	return fmt.Errorf("server %s: %w", c.cfg.Addr, explainLost(err))
}

// serverIP is the address the control connection reached: data goes to
// the same one, whatever else the server's name resolves to, since the
// server accepts data only from the control connection's peer.
func (c *Client) serverIP() string {
	return addrIP(c.cc.NetConn().RemoteAddr())
}

func addrIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip4 := ta.IP.To4(); ip4 != nil {
			return ip4.String()
		}
		return ta.IP.String()
	}
	h, _, _ := net.SplitHostPort(a.String())
	return h
}

func (c *Client) dialStreams(ctx context.Context, t spec.Test, acc control.Accepted) ([]endpoint.Conn, error) {
	switch {
	case t.Kind.UDP():
		return c.dialUDP(ctx, t, acc)
	case t.Kind == spec.TCPCRR:
		// A connection per transaction: the loops dial as they go.
		var conns []endpoint.Conn
		for _, st := range t.Streams() {
			conns = append(conns, endpoint.Conn{ID: st.ID, Dir: st.Dir})
		}
		return conns, nil
	}
	addr := net.JoinHostPort(c.serverIP(), strconv.Itoa(acc.DataPort))
	var conns []endpoint.Conn
	for _, st := range t.Streams() {
		tc, err := engine.Dial(ctx, c.network, addr, engine.ClientOptions(t, st))
		if err != nil {
			endpoint.CloseAll(conns)
			return nil, fmt.Errorf("data connection %d to %s: %w", st.ID, addr, err)
		}
		tc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if err := control.WriteDataHeader(tc, acc.Token, st.ID); err != nil {
			tc.Close()
			endpoint.CloseAll(conns)
			return nil, fmt.Errorf("data connection %d to %s: %w", st.ID, addr, err)
		}
		tc.SetWriteDeadline(time.Time{})
		conns = append(conns, endpoint.Conn{ID: st.ID, Dir: st.Dir, Conn: tc})
	}
	return conns, nil
}

// measure runs a test the server is ready for, in the protocol's steps:
// send start, receive the server's part (receiveRemote) while this
// side runs its own (runLocal), wait for both (awaitBoth), and join
// them (join).
func (c *Client) measure(ctx context.Context, t spec.Test, acc control.Accepted, conns []endpoint.Conn, content []byte) (result.Result, error) {
	// The environment record names the device whose counters endpoint.Run
	// reads (the record is kept for the connection: collected here at
	// its first run, before the start, so that its cost falls outside
	// both sides' windows).
	wireDev := wireDevice(c.localEnv(ctx))
	c.log.Debug("environment record ready")
	m := &measurement{c: c, t: t, started: time.Now()}
	if err := c.cc.Send(control.TypeStart, struct{}{}); err != nil {
		endpoint.CloseAll(conns)
		c.broken = true
		return result.Result{}, err
	}
	m.ticks = newTicker(t, m.withProbes(c.cfg.OnInterval))
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.cancel = cancel
	remoteCh := m.receiveRemote()
	stopAbort := context.AfterFunc(ctx, func() { m.abort("interrupted by the user") })
	defer stopAbort()
	localCh := m.runLocal(runCtx, acc, conns, content, wireDev)
	local, rem := m.awaitBoth(ctx, localCh, remoteCh)
	m.ticks.flush()
	if rem.err != nil {
		c.broken = true
	}
	return m.join(ctx, local, rem)
}

// A measurement is what the phases of one test's run on the client
// share, from the start to the joined result (Client.measure).
type measurement struct {
	c       *Client
	t       spec.Test
	started time.Time            // just before the start went out
	ticks   *ticker              // both sides' interval reports, joined for OnInterval
	live    *endpoint.LiveProbes // an RRUL run's probes, read for its interval lines
	// cancel stops the local side's run: on the server's abort or
	// failure.
	cancel    context.CancelFunc
	abortOnce sync.Once
	// serverAbort is why the server ended the test early, "" when it
	// did not; receiveRemote's goroutine writes it.
	serverAbort struct {
		sync.Mutex
		reason string
	}
}

// sideOutcome is how one side's part of a test ended: its result, or
// what went wrong.
type sideOutcome struct {
	res result.SideResult
	err error
}

// abort tells the server why this side ends the test, once; a failed
// send is left to the wait for the server's result to notice.
func (m *measurement) abort(reason string) {
	m.abortOnce.Do(func() { m.c.cc.Send(control.TypeAbort, control.Abort{Reason: reason}) })
}

// receiveRemote reads the server's messages while the test runs, in a
// goroutine of its own, until the server's result, an error, or the
// test's length plus 20 s (generous: the server's run ends within
// omit+duration plus its first-byte grace and drain, 5 s each). It
// leaves the remote side's one outcome in the channel it returns.
func (m *measurement) receiveRemote() <-chan sideOutcome {
	ch := make(chan sideOutcome, 1)
	go func() { ch <- m.readRemote(time.Now().Add(m.t.Length() + 20*time.Second)) }()
	return ch
}

// readRemote is receiveRemote's loop, reading until deadline: interval
// reports while the test runs, perhaps an abort, then the result.
func (m *measurement) readRemote(deadline time.Time) sideOutcome {
	guard := newIntervalGuard(m.t, m.started)
	// The server's interval reports, kept as they pass the guard (which
	// bounds them): its result leaves them out (StreamedIntervals).
	reports := map[spec.Direction][]result.IntervalReport{}
	for {
		msg, err := m.c.cc.Recv(time.Until(deadline))
		if err != nil {
			return sideOutcome{err: err}
		}
		switch msg.Type {
		case control.TypeInterval:
			var r result.IntervalReport
			if err := msg.Decode(&r); err != nil {
				return sideOutcome{err: err}
			}
			if err := guard.check(r); err != nil {
				return sideOutcome{err: err}
			}
			r.Side = result.Remote
			reports[r.Direction] = append(reports[r.Direction], r)
			m.ticks.add(r)
		case control.TypeAbort:
			m.serverAborted(msg)
		case control.TypeResult:
			return remoteResult(m.t, msg, reports, (time.Since(m.started) + intervalSlack).Seconds())
		default:
			return sideOutcome{err: fmt.Errorf("%w: unexpected %q message during the test", control.ErrProtocol, msg.Type)}
		}
	}
}

// serverAborted takes the server's abort: it ends the test early (it is
// shutting down), so this side stops sending and both close cleanly.
// The reason is kept for the result's warning.
func (m *measurement) serverAborted(msg control.Message) {
	var a control.Abort
	msg.Decode(&a)
	m.serverAbort.Lock()
	m.serverAbort.reason = a.Reason
	m.serverAbort.Unlock()
	m.cancel()
}

// remoteResult decodes and checks the server's result message, with
// the interval reports it streamed before; a result that fails the
// check (checkResult, for a run of runS seconds) is kept for nothing.
func remoteResult(t spec.Test, msg control.Message, reports map[spec.Direction][]result.IntervalReport, runS float64) sideOutcome {
	var r result.SideResult
	err := msg.Decode(&r)
	if err == nil {
		if err = checkResult(t, r, runS); err != nil {
			r = result.SideResult{} // nothing of it is kept
		} else {
			fillIntervals(&r, reports)
		}
	}
	r.Side = result.Remote
	return sideOutcome{res: r, err: err}
}

// withProbes is emit with each tick of an RRUL run given the round trips
// of the probes answered within its interval; emit itself otherwise.
func (m *measurement) withProbes(emit func(result.Tick)) func(result.Tick) {
	if emit == nil || m.t.Kind != spec.RRUL {
		return emit
	}
	m.live = &endpoint.LiveProbes{}
	return func(tk result.Tick) {
		l := result.LatencyOf(m.live.Answered(tk.Interval.StartS, tk.Interval.EndS), 0)
		tk.Probes = &l
		emit(tk)
	}
}

// runLocal starts this side's run of the test under runCtx
// (endpoint.Run, or endpoint.RunRRUL with the probes the server
// accepted), in a goroutine of its own, over conns, which the run
// closes. The channel it returns gets the local outcome when the run
// ends.
func (m *measurement) runLocal(runCtx context.Context, acc control.Accepted, conns []endpoint.Conn, content []byte, wireDev string) <-chan sideOutcome {
	c, t := m.c, m.t
	run := endpoint.Run
	if t.Kind == spec.RRUL {
		run = func(ctx context.Context, cfg endpoint.Config) (result.SideResult, error) {
			p := c.probes(t, acc)
			p.Live = m.live
			return endpoint.RunRRUL(ctx, cfg, p)
		}
	}
	ch := make(chan sideOutcome, 1)
	go func() {
		r, err := run(runCtx, endpoint.Config{
			Spec:       t,
			Side:       result.Local,
			Sends:      spec.ClientToServer,
			Conns:      conns,
			Payload:    content,
			OnInterval: m.ticks.add,
			CRRNetwork: c.network,
			CRRAddr:    net.JoinHostPort(c.serverIP(), strconv.Itoa(acc.CRRPort)),
			CRROptions: engine.ClientOptions(t, spec.Stream{}),
			ProcRoot:   c.cfg.ProcRoot,
			WireDevice: wireDev,
			// A routed lab's router, sampled in an RRUL run.
			RouterQueues: c.cfg.RouterQueues,
			// A relaying server's limit on what it sends.
			MaxUDPRRRate: c.cfg.MaxUDPRRRate,
			Logger:       c.log,
		})
		ch <- sideOutcome{res: r, err: err}
	}()
	return ch
}

// awaitBoth waits for both sides' outcomes. A local failure is told to
// the server (abort); a remote failure stops the local side, since its
// figures are then all there is. Once the local side is done after an
// interrupt (ctx), the server has 3 s left for its result: then the
// control connection's read is unblocked (its goroutine ends) and the
// remote outcome is that error.
func (m *measurement) awaitBoth(ctx context.Context, localCh, remoteCh <-chan sideOutcome) (local, rem sideOutcome) {
	gotLocal, gotRemote := false, false
	var wait <-chan time.Time
	for !gotLocal || !gotRemote {
		select {
		case local = <-localCh:
			gotLocal = true
			m.c.log.Debug("local side done")
			if local.err != nil {
				m.abort(local.err.Error())
			}
			if !gotRemote && ctx.Err() != nil {
				wait = time.After(3 * time.Second)
			}
		case rem = <-remoteCh:
			gotRemote = true
			m.c.log.Debug("server result received")
			if rem.err != nil {
				// Without the server the local figures are all there is:
				// stop the local side now.
				m.cancel()
			}
		case <-wait:
			rem = sideOutcome{err: errors.New("no result from the server within 3s of the interrupt")}
			gotRemote = true
			m.c.cc.NetConn().SetReadDeadline(time.Unix(1, 0))
		}
	}
	return local, rem
}

// join builds the test's result from both sides' outcomes, with this
// side's environment record, and marks it interrupted when ctx ended or
// the server ended the test early. The error is the failure that
// decides the run (verdict); on an interrupt failures are warnings. A
// server whose figures were refused (result.ErrFigure) leaves the run
// without a result, interrupted or not.
func (m *measurement) join(ctx context.Context, local, rem sideOutcome) (result.Result, error) {
	c := m.c
	if errors.Is(rem.err, result.ErrFigure) {
		// The server's figures were refused: a result of this side's
		// alone would show its receiver's 0 as measured, and be printed,
		// archived and exported as one. The run has none.
		return result.Result{}, fmt.Errorf("server %s: %w", c.cfg.Addr, rem.err)
	}
	local.res.Env = c.localEnv(ctx)
	res := endpoint.Join(m.t, local.res, rem.res, m.started, c.cfg.Hostname, c.cfg.Addr)
	c.log.Debug("result joined")
	if ctx.Err() != nil {
		res.Interrupted = true
	}
	m.serverAbort.Lock()
	reason := m.serverAbort.reason
	m.serverAbort.Unlock()
	if reason != "" && rem.err == nil {
		// The server stopped the test: its result is partial and so is
		// ours; a stream error on this side is the consequence, not news.
		res.Interrupted = true
		res.Warnings = append(res.Warnings, result.Words("server ended the test early: "+reason))
		if local.err != nil {
			res.Warnings = append(res.Warnings, result.Words("local side: "+local.err.Error()))
		}
		return res, nil
	}
	return m.verdict(ctx, res, local, rem)
}

// verdict returns res with the error that fails the run, if any: the
// server's failure, then this side's, then a stream of the server's;
// after an interrupt (ctx) only the server's failure is kept, as a
// warning.
func (m *measurement) verdict(ctx context.Context, res result.Result, local, rem sideOutcome) (result.Result, error) {
	addr := m.c.cfg.Addr
	switch {
	case rem.err != nil && ctx.Err() == nil:
		return res, fmt.Errorf("server %s: %w", addr, explainLost(rem.err))
	case rem.err != nil:
		res.Warnings = append(res.Warnings, result.Words("server: "+rem.err.Error()))
	case local.err != nil && ctx.Err() == nil:
		return res, local.err
	case rem.res.Error != "" && ctx.Err() == nil:
		// A stream of the server's failed (a datagram too big for the
		// path, a reset): the run failed there as it would have here.
		return res, fmt.Errorf("server %s: %w", addr, escapedErr{errors.New(rem.res.Error)})
	}
	return res, nil
}
