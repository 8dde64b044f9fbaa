// Package server is the wirespeed daemon: it accepts control and data
// connections on one port, tells them apart by their preamble, negotiates
// the protocol, admits tests up to its limit, pairs data connections with
// the test that announced them, runs its side of each test and sends its
// result back.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/endpoint"
	"wirespeed/internal/engine"
	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// DefaultPort is the port `wirespeed serve` listens on and `wirespeed run`
// connects to when none is given.
const DefaultPort = 7575

// Config holds the server's settings. Zero values mean the defaults.
type Config struct {
	MaxTests         int           // tests running at once; default 1
	HandshakeTimeout time.Duration // to send the preamble and hello, or a data header; default 5s
	IdleTimeout      time.Duration // between messages of an idle session; default 30s
	StreamsTimeout   time.Duration // for all data connections of a test to arrive; default 10s
	MaxFrame         int           // control frame bound; default control.DefaultMaxFrame
	Tool             string        // version string for the hello
	Hostname         string
	Logger           *slog.Logger
	ProcRoot         string // where /proc is mounted, for CPU figures; default measure.DefaultProcRoot

	// ShutdownTimeout is how long running tests may go on after Serve's
	// context is cancelled before they are aborted; 0 aborts them at once
	// (shutdown.go).
	ShutdownTimeout time.Duration
	// Metrics, when set, counts what the server does (see NewMetrics).
	Metrics *Metrics

	// Auth says who may use the server, Admission how much one client may
	// ask of it (admission.go, tlsconn.go).
	Auth      Auth
	Admission Admission
	// Speaks is what the port speaks: wirespeed, iperf3 or both (the
	// default); see iperf3.go.
	Speaks Protocols
	// Relay allows third-party tests; see relay.go.
	Relay RelayConfig
	// AllowNetconf lets authenticated clients change the offload features
	// and MTU of this host's devices for a matrix (netconf.go).
	AllowNetconf bool
	// OneOff serves one client's test, then stops accepting: Serve
	// returns nil once that client is done (oneoff.go; iperf3's -1).
	OneOff bool
}

// Server serves tests. Create it with New, run it with Serve.
type Server struct {
	cfg    Config
	log    *slog.Logger
	junk   junkLog      // sampled log lines of refused connections (junklog.go)
	active atomic.Int32 // tests admitted
	// netconfGen counts the device changes any session made through
	// netconf: a session whose record is older than the last one
	// collects it again on request, however young (env.go's refresh).
	netconfGen atomic.Uint64

	mu      sync.Mutex
	pending map[control.Token]*pendingTest

	safety safety     // state of the protections; its zero value is ready
	ip3    iperf3Hook // iperf3 clients on the same port (iperf3.go)

	nc netconfState // devices sessions are changing (netconf.go)

	oneOff oneOff // serve -1 (oneoff.go)
}

// New returns a server with cfg's defaults filled in.
func New(cfg Config) *Server {
	if cfg.MaxTests <= 0 {
		cfg.MaxTests = 1
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 5 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	if cfg.StreamsTimeout <= 0 {
		cfg.StreamsTimeout = 10 * time.Second
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = control.DefaultMaxFrame
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	srv := &Server{cfg: cfg, log: log, pending: map[control.Token]*pendingTest{}}
	if cfg.OneOff {
		srv.oneOff.done = make(chan struct{})
	}
	return srv
}

// Serve accepts connections on ln until ctx is cancelled, then closes ln,
// aborts running tests (each still sends what it measured) and returns once
// every connection it started has ended.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The sampled log of refused connections writes its last summary
	// once every connection has ended (this defer runs after wg.Wait).
	junkCtx, stopJunk := context.WithCancel(ctx)
	junkDone := make(chan struct{})
	go func() {
		defer close(junkDone)
		s.runJunkLog(junkCtx)
	}()
	defer func() {
		stopJunk()
		<-junkDone
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	// A one-off server stops accepting once its test was served; the
	// connections it has go on to their end (wg.Wait).
	served := s.oneOffDone()
	go func() {
		select {
		case <-served:
			ln.Close()
		case <-ctx.Done():
		}
	}()
	sessCtx, drained := s.drainContext(ctx)
	defer drained()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || isClosed(served) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if s.acceptBackoff(ctx, err) {
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		s.ip3.accepted(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handle(sessCtx, c)
		}()
	}
}

// handle reads the preamble and hands the connection to the control or the
// data path. A connection that says nothing within the handshake timeout,
// or something else, is closed. The timeout is one deadline for the whole
// handshake (preamble, TLS, hello, authentication, or a data header): it
// does not restart at each step, so a connection that dribbles its bytes
// is closed when it runs out, as a silent one is.
func (s *Server) handle(ctx context.Context, c net.Conn) {
	peer := c.RemoteAddr().String()
	deadline := time.Now().Add(s.cfg.HandshakeTimeout)
	c.SetDeadline(deadline)
	var magic [4]byte
	if _, err := io.ReadFull(c, magic[:]); err != nil {
		s.log.Debug("connection closed before its preamble", "peer", peer, "err", err)
		c.Close()
		return
	}
	if isTLSRecord(magic) {
		s.handleTLS(ctx, c, magic, deadline)
		return
	}
	if s.sniff(ctx, c, magic, deadline) {
		return
	}
	switch magic {
	case control.ControlMagic:
		s.session(ctx, control.NewConn(c, s.cfg.MaxFrame), deadline)
	case control.DataMagic:
		s.data(c)
	default:
		s.metrics().connRefused("unknown_protocol")
		s.refused(s.log, slog.LevelInfo, "unknown_protocol", "unknown protocol, connection closed", "peer", peer, "first_bytes", fmt.Sprintf("%q", magic[:]))
		c.Close()
	}
}

// pendingTest is a test waiting for its data connections.
type pendingTest struct {
	peer    netip.Addr
	want    map[int]spec.Direction
	mu      sync.Mutex
	got     map[int]*net.TCPConn
	closed  bool          // the test gave up on its streams; late ones are closed
	arrived chan struct{} // closed when every stream has arrived
}

// closeAll closes the streams that arrived and refuses later ones.
func (pt *pendingTest) closeAll() {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.closed = true
	for _, c := range pt.got {
		c.Close()
	}
}

// data pairs a data connection with the test that announced its token,
// only from the address of that test's control connection.
func (s *Server) data(c net.Conn) {
	tok, id, err := control.ReadDataHeader(c)
	if err != nil {
		s.refused(s.log, slog.LevelInfo, "bad_data_header", "bad data connection", "peer", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	s.mu.Lock()
	pt := s.pending[tok]
	s.mu.Unlock()
	tc, _ := c.(*net.TCPConn)
	if pt == nil || tc == nil {
		s.refused(s.log, slog.LevelInfo, "data_no_test", "data connection for no announced test, closed", "peer", c.RemoteAddr().String())
		c.Close()
		return
	}
	if addrOf(c.RemoteAddr()) != pt.peer {
		s.refused(s.log, slog.LevelWarn, "data_other_address", "data connection from another address than its test's control connection, closed",
			"peer", c.RemoteAddr().String(), "control_peer", pt.peer.String())
		c.Close()
		return
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.closed {
		c.Close()
		return
	}
	if _, ok := pt.want[id]; !ok || pt.got[id] != nil {
		s.refused(s.log, slog.LevelInfo, "data_bad_stream", "data connection with an unexpected or repeated stream id, closed", "peer", c.RemoteAddr().String(), "stream", id)
		c.Close()
		return
	}
	c.SetDeadline(time.Time{})
	pt.got[id] = tc
	if len(pt.got) == len(pt.want) {
		close(pt.arrived)
	}
}

func addrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(ta.IP)
		return ip.Unmap()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap.Addr().Unmap()
}

// session is one control connection after its handshake: what its
// tests and relays share.
type session struct {
	s    *Server
	cc   *control.Conn
	log  *slog.Logger
	msgs <-chan recvd // the control connection's messages, read by one goroutine
	// recvTimeout is how long the reader waits for the next message: the
	// idle timeout, or a running test's length plus grace.
	recvTimeout atomic.Int64
	// admitted says the session holds one of the server's test slots
	// (Config.MaxTests); a test or a relay takes it, bye or the session's
	// end frees it.
	admitted bool
	// freeMemory gives back the running test's share of the server-wide
	// memory budget (memory.go); nil when it holds none.
	freeMemory func()
}

// releaseMemory gives back the memory the session's test holds, once.
func (ss *session) releaseMemory() {
	if ss.freeMemory != nil {
		ss.freeMemory()
		ss.freeMemory = nil
	}
}

// admit takes a test slot for the session unless it holds one. When the
// server is full, it tells the client (what names the request in the
// log) and returns false.
func (ss *session) admit(what string) bool {
	if ss.admitted {
		return true
	}
	s := ss.s
	if n := s.active.Add(1); int(n) > s.cfg.MaxTests {
		s.active.Add(-1)
		s.countRefused(refusedBusy)
		ss.log.Info(what+" refused: busy", "running", n-1)
		ss.cc.SendError(control.CodeBusy, fmt.Sprintf("server is busy with %d running test(s), its limit is %d; retry later or start it with --max-tests %d", n-1, s.cfg.MaxTests, s.cfg.MaxTests+1))
		return false
	}
	ss.admitted = true
	return true
}

// release frees the session's test slot, if it holds one.
func (ss *session) release() {
	if ss.admitted {
		ss.s.active.Add(-1)
		ss.admitted = false
	}
}

// session serves one control connection: the hello, then tests one after
// another until the client says bye, goes quiet or the server stops. The
// handshake must end by deadline.
func (s *Server) session(ctx context.Context, cc *control.Conn, deadline time.Time) {
	tested := false
	defer func() {
		if tested {
			s.served()
		}
	}()
	defer cc.Close()
	peer := cc.NetConn().RemoteAddr().String()
	log := s.log.With("peer", peer)
	gate, ok := s.handshake(cc, deadline, log)
	if !ok {
		return
	}
	defer gate.release()
	cc.NetConn().SetDeadline(time.Time{})
	ctx, endHost := s.startHostSession(ctx, cc, log)
	defer endHost()
	// The idle CPU baseline, once per session, before any test: the
	// client takes its own at the same moment, as its Dial ends. It runs
	// beside the session; a test waits for it, a relay does not.
	hs := hostSessionOf(ctx)
	hs.idleBaseline(ctx)

	msgs := make(chan recvd, 1)
	ss := &session{s: s, cc: cc, log: log, msgs: msgs}
	defer ss.release()
	readerCtx, stopReader := context.WithCancel(ctx)
	defer stopReader()
	ss.recvTimeout.Store(int64(s.cfg.IdleTimeout))
	go func() {
		defer close(msgs)
		for {
			m, err := cc.Recv(time.Duration(ss.recvTimeout.Load()))
			select {
			case msgs <- recvd{m, err}:
			case <-readerCtx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// Unblock the reader when the session ends.
	defer cc.NetConn().SetReadDeadline(time.Unix(1, 0))

	for {
		var m recvd
		select {
		case m = <-msgs:
		case <-ctx.Done():
			return
		}
		if m.err != nil {
			s.refuseFrame(cc, m.err, log)
			if !errors.Is(m.err, io.EOF) {
				log.Info("control connection ended", "err", m.err)
			}
			return
		}
		switch m.msg.Type {
		case control.TypeBye:
			// Free the slot before answering, so that a client started
			// after this one's bye finds the server free.
			ss.release()
			cc.Send(control.TypeBye, struct{}{})
			return
		case control.TypeTest:
			hs.awaitBaseline()
		case control.TypeRelay:
			if err := ss.relay(ctx, m.msg); err != nil {
				return
			}
			continue
		case control.TypeAbort:
			// An abort that crossed the end of its test on the wire.
			continue
		case control.TypeEnv, control.TypeNetconf:
			if err := s.hostRequest(ctx, cc, m.msg); err != nil {
				return
			}
			continue
		default:
			cc.SendError(control.CodeProtocol, fmt.Sprintf("unexpected %q message between tests", m.msg.Type))
			return
		}
		var req control.TestRequest
		if err := m.msg.Decode(&req); err != nil {
			cc.SendError(control.CodeProtocol, err.Error())
			return
		}
		if err := req.Spec.Validate(); err != nil {
			s.countRefused(refusedInvalid)
			cc.SendError(control.CodeInvalid, err.Error())
			continue
		}
		if s.refuseTest(cc, req.Spec, len(req.Payload), req.StreamedIntervals, log) || !ss.admit("test") {
			continue
		}
		if ss.freeMemory, ok = ss.reserve(req.Spec, len(req.Payload), req.StreamedIntervals); !ok {
			continue
		}
		tested = true
		err := ss.observeTest(ctx, req.Spec, func(ctx context.Context) error {
			return ss.test(ctx, req)
		})
		ss.releaseMemory()
		if err != nil {
			return // observeTest logged it
		}
	}
}

// handshake reads the client's hello, answers with the server's,
// admits the session and authenticates the client, all by deadline. It
// reports whether the session may go on; the caller releases the gate.
func (s *Server) handshake(cc *control.Conn, deadline time.Time, log *slog.Logger) (*sessionGate, bool) {
	cc.SetMaxFrame(control.HandshakeMaxFrame) // until the client authenticated
	mine := control.NewHello(s.cfg.Tool, s.cfg.Hostname)
	var theirs control.Hello
	if err := cc.Expect(control.TypeHello, &theirs, time.Until(deadline)); err != nil {
		s.refused(log, slog.LevelInfo, "handshake", "handshake failed", "err", err)
		return nil, false
	}
	if err := cc.WriteMagic(); err != nil {
		return nil, false
	}
	version, err := control.Negotiate(mine, theirs)
	if err != nil {
		s.refused(log, slog.LevelInfo, "version", "client refused", "err", err)
		cc.SendError(control.CodeVersion, err.Error())
		return nil, false
	}
	gate, ok := s.admitSession(cc, &mine, theirs, log)
	if !ok {
		return nil, false
	}
	if err := cc.Send(control.TypeHello, mine); err != nil || !gate.authenticate(cc, version, deadline) {
		gate.release()
		return nil, false
	}
	return gate, true
}

type recvd struct {
	msg control.Message
	err error
}

// test runs one test of the session in the protocol's steps: open its
// data path and accept it (newTestRun, accept), wait for its data
// connections (awaitData), start a side that only receives
// (startEarly), say ready and wait for the start (awaitStart), run this
// side while watching the control connection (run, endRun), and send
// the result (finish). An error ends the session.
func (ss *session) test(ctx context.Context, req control.TestRequest) error {
	tr, err := ss.newTestRun(req)
	if err != nil {
		return err
	}
	defer tr.dp.close()
	tr.register()
	// The one cleanup of the test's TCP streams, whatever way it ends:
	// endpoint.Run closes them when the test ran, and closing again is
	// harmless; before that, this closes those that arrived and refuses
	// later ones.
	defer tr.pt.closeAll()
	defer tr.unregister()
	if err := tr.accept(); err != nil {
		return err
	}
	if err := tr.awaitData(ctx); err != nil {
		return err
	}
	conns, err := streamConns(tr.t, tr.pt, tr.dp)
	if err != nil {
		ss.cc.SendError(control.CodeInvalid, fmt.Sprintf("server data socket: %v", err))
		return nil
	}
	tr.conns = conns
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr.cancel = cancel
	if receivesOnly(tr.t) {
		tr.startEarly(runCtx)
	}
	if err := tr.awaitStart(ctx); err != nil {
		return err
	}
	stopWatch := watchControl(ss.msgs, cancel, "the test")
	// When the server stops, tell the client first so that it stops sending
	// and both sides close their streams cleanly.
	stopNotice := context.AfterFunc(ctx, func() {
		ss.cc.Send(control.TypeAbort, control.Abort{Reason: "server shutting down"})
	})
	defer stopNotice()
	res, err := tr.run(runCtx)
	abortErr := tr.endRun(stopWatch)
	return tr.finish(ctx, res, err, abortErr)
}

// A testRun is what the phases of one test of a session share
// (session.test).
type testRun struct {
	ss   *session
	req  control.TestRequest
	t    spec.Test
	peer netip.Addr
	pt   *pendingTest // its TCP data connections, as they arrive
	dp   *dataPath    // its UDP sockets and TCP_CRR listener
	tok  control.Token
	env  *sysinfo.Env // this side's environment record (awaitData)
	// conns are the streams' sockets; cancel stops the run (an abort,
	// a lost client, a stuck reader).
	conns  []endpoint.Conn
	cancel context.CancelFunc
	// reports writes the run's interval reports to the client; early
	// gets the outcome of a run started before ready (awaitStart).
	reports *reportWriter
	early   chan ran
}

// ran is how this side's run ended.
type ran struct {
	res result.SideResult
	err error
}

// newTestRun makes the test's state: the data connections it waits for
// and its data path. A data path that cannot open is told to the client
// and ends the session.
func (ss *session) newTestRun(req control.TestRequest) (*testRun, error) {
	t := req.Spec
	tr := &testRun{ss: ss, req: req, t: t, peer: addrOf(ss.cc.NetConn().RemoteAddr())}
	tr.pt = &pendingTest{peer: tr.peer, want: map[int]spec.Direction{}, got: map[int]*net.TCPConn{}, arrived: make(chan struct{})}
	if tcpStreams(t) {
		for _, st := range t.Streams() {
			tr.pt.want[st.ID] = st.Dir
		}
	} else {
		close(tr.pt.arrived) // its data path is UDP, or a connection per transaction
	}
	if t.MPTCP && tcpStreams(t) {
		procRoot := ss.s.cfg.ProcRoot
		if procRoot == "" {
			procRoot = measure.DefaultProcRoot
		}
		if err := engine.CheckMPTCP(procRoot); err != nil {
			ss.cc.SendError(control.CodeInvalid, fmt.Sprintf("server cannot accept --mptcp: %v", err))
			return nil, err
		}
	}
	local := addrOf(ss.cc.NetConn().LocalAddr())
	dp, err := openDataPath(t, local, tr.peer)
	if err != nil {
		ss.cc.SendError(control.CodeInternal, fmt.Sprintf("server data sockets: %v", err))
		return nil, err
	}
	tr.dp = dp
	if dp.mptcp != nil {
		go ss.s.acceptMPTCP(dp.mptcp)
	}
	return tr, nil
}

// register gives the test a new token under which the server's accept
// loop hands it its data connections (Server.data).
func (tr *testRun) register() {
	s := tr.ss.s
	tr.tok = control.NewToken()
	s.mu.Lock()
	s.pending[tr.tok] = tr.pt
	s.mu.Unlock()
}

// unregister takes the test's token back: later data connections that
// present it are refused. Calling it again does nothing.
func (tr *testRun) unregister() {
	s := tr.ss.s
	s.mu.Lock()
	delete(s.pending, tr.tok)
	s.mu.Unlock()
}

// accept tells the client the test's token and the ports of its data
// path.
func (tr *testRun) accept() error {
	cc := tr.ss.cc
	port := 0
	if la, ok := cc.NetConn().LocalAddr().(*net.TCPAddr); ok {
		port = la.Port
	}
	acc := control.Accepted{Token: tr.tok, DataPort: tr.dp.dataPort(port), UDPPorts: tr.dp.udpPorts(), CRRPort: tr.dp.crrPort()}
	return cc.Send(control.TypeAccepted, acc)
}

// awaitData waits for the test's data connections (awaitStreams, at
// most StreamsTimeout) while this side's environment record is
// collected, then proves the UDP streams' peers. It leaves the record in
// tr.env and the token unregistered.
func (tr *testRun) awaitData(ctx context.Context) error {
	ss := tr.ss
	// The record names the device whose counters endpoint.Run reads; it is
	// collected at the session's first test, before the start, while the
	// data connections arrive: this goroutine only waits for them until
	// it takes the record, so the session's state has one user at a time.
	envCh := make(chan *sysinfo.Env, 1)
	go func() { envCh <- sideEnv(ctx) }()
	if err := ss.awaitStreams(ctx, tr.pt); err != nil {
		<-envCh
		return err
	}
	tr.unregister()
	tr.env = <-envCh
	ss.log.Debug("data connections in, environment record ready")
	if err := tr.dp.proveUDP(ctx, tr.tok, ss.s.cfg.StreamsTimeout, ss.log); err != nil {
		ss.cc.SendError(control.CodeProtocol, err.Error())
		return err
	}
	return nil
}

// awaitStart sends ready and waits for the client's start, at most
// StreamsTimeout. When the start does not come, a run started early is
// stopped and waited for (abandon).
func (tr *testRun) awaitStart(ctx context.Context) error {
	timeout := tr.ss.s.cfg.StreamsTimeout
	if err := tr.ss.cc.Send(control.TypeReady, struct{}{}); err != nil {
		return tr.abandon(err)
	}
	select {
	case m := <-tr.ss.msgs:
		if m.err != nil || m.msg.Type != control.TypeStart {
			return tr.abandon(fmt.Errorf("expected start: %v %v", m.msg.Type, m.err))
		}
	case <-time.After(timeout):
		return tr.abandon(fmt.Errorf("no start within %v", timeout))
	case <-ctx.Done():
		return tr.abandon(ctx.Err())
	}
	return nil
}

// startEarly starts the run (under runCtx) of a side that only
// receives, before ready: its loops wait in their reads when the client's data begins,
// and its window opens at the first byte as it arrives. Started after
// start, on a server busy with many tests, a loop came up to 0.5 s
// after the data, read what had queued meanwhile at once, and its
// window was that much short of the bytes it counted (2-4% over -b).
// The run's outcome goes to tr.early.
func (tr *testRun) startEarly(runCtx context.Context) {
	tr.startReports(tr.ss.s.cfg.StreamsTimeout)
	early := make(chan ran, 1)
	tr.early = early
	go func() {
		r, err := tr.runSide(runCtx)
		early <- ran{r, err}
	}()
}

// abandon stops an early run that never got its start, waits for it and
// closes its report writer; it returns err.
func (tr *testRun) abandon(err error) error {
	if tr.early != nil {
		tr.cancel()
		<-tr.early
		tr.reports.close()
	}
	return err
}

// startReports starts the writer of the run's interval reports: a client
// that stops reading them ends its test, by the test's deadline at the
// latest. The deadline runs from the start; made before the start (a
// side that starts early), it counts the longest wait for it too.
func (tr *testRun) startReports(beforeStart time.Duration) {
	t := tr.t
	tr.reports = newReportWriter(tr.ss.cc, t, time.Now().Add(beforeStart+t.Omit+t.Duration+reportsGrace), tr.cancel)
}

// run runs this side of the test under runCtx, once the client started
// it: it waits for the early run, or starts the run now. It returns when
// the run ended or was cancelled.
func (tr *testRun) run(runCtx context.Context) (result.SideResult, error) {
	tr.ss.log.Debug("test started", "test", tr.t.Kind, "streams", len(tr.conns), "duration", tr.t.Duration)
	if tr.early != nil {
		r := <-tr.early
		return r.res, r.err
	}
	tr.startReports(0)
	return tr.runSide(runCtx)
}

// runSide runs the server's side of the test under runCtx
// (endpoint.Run, or endpoint.RunRRUL with the data path's probes); its
// interval reports go to tr.reports.
func (tr *testRun) runSide(runCtx context.Context) (result.SideResult, error) {
	s, t := tr.ss.s, tr.t
	cfg := endpoint.Config{
		Spec:            t,
		Side:            result.Remote,
		Sends:           spec.ServerToClient,
		Conns:           tr.conns,
		Payload:         tr.req.Payload,
		CRR:             tr.dp.crrShared,
		OnInterval:      tr.reports.add,
		StreamIntervals: tr.req.StreamedIntervals,
		ProcRoot:        s.cfg.ProcRoot,
		WireDevice:      wireDevice(tr.env),
		// What a UDP_RR client makes this server send is paced to the
		// UDP limit, whatever its sizes, burst and request rate.
		MaxUDPRRRate: s.admission().MaxUDPRateBitsPerSecond,
		Logger:       tr.ss.log,
	}
	if t.Kind == spec.RRUL {
		return endpoint.RunRRUL(runCtx, cfg, endpoint.Probes{Echo: tr.dp.udp[0], EchoMaxPerSecond: s.probeEchoRate(t), Listener: tr.dp.crr, Peer: tr.peer})
	}
	return endpoint.Run(runCtx, cfg)
}

// endRun closes the run's report writer and stops the watch of the
// control connection (stopWatch, from watchControl). It returns why the
// run was cut short, nil when it was not or the client aborted it: the
// report writer's failure first, the root cause, as the watch may have
// failed after it.
func (tr *testRun) endRun(stopWatch func() error) error {
	reportErr := tr.reports.close()
	abortErr := stopWatch()
	if reportErr != nil {
		abortErr = reportErr
	}
	return abortErr
}

// finish completes this side's result (res, err) and frees the test's
// memory, logs the test (testDone), and sends the result unless the run
// was cut short (abortErr), which it returns then.
func (tr *testRun) finish(ctx context.Context, res result.SideResult, err, abortErr error) error {
	ss, s := tr.ss, tr.ss.s
	// The loops and their buffers are gone: free the memory before the
	// client hears the result and perhaps asks for the next test.
	ss.releaseMemory()
	res.Hostname = s.cfg.Hostname
	res.Env = tr.env
	var bytes int64
	for _, f := range res.Flows {
		bytes += f.Bytes
	}
	s.testDone(ctx, ss.log, tr.t, bytes, res, err, abortErr)
	if abortErr != nil {
		return abortErr
	}
	err = ss.cc.Send(control.TypeResult, res)
	ss.log.Debug("result sent", "err", err)
	return err
}

// receivesOnly reports whether this server only receives in t: a stream
// test whose every stream goes from the client to the server.
func receivesOnly(t spec.Test) bool {
	if t.Kind != spec.TCPStream && t.Kind != spec.UDPStream {
		return false
	}
	for _, st := range t.Streams() {
		if st.Dir != spec.ClientToServer {
			return false
		}
	}
	return true
}

// awaitStreams waits for the test's data connections, at most
// StreamsTimeout; a control message meanwhile or the end of ctx gives up.
func (ss *session) awaitStreams(ctx context.Context, pt *pendingTest) error {
	tm := time.NewTimer(ss.s.cfg.StreamsTimeout)
	defer tm.Stop()
	select {
	case <-pt.arrived:
		return nil
	case <-tm.C:
		pt.mu.Lock()
		n := len(pt.got)
		pt.mu.Unlock()
		ss.cc.SendError(control.CodeProtocol, fmt.Sprintf("only %d of %d data connections arrived within %v", n, len(pt.want), ss.s.cfg.StreamsTimeout))
		return fmt.Errorf("data connections missing")
	case m := <-ss.msgs:
		return fmt.Errorf("control message while waiting for data connections: %v %v", m.msg.Type, m.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// streamConns gives each of the test's streams its socket: the UDP
// socket of its place, none for TCP_CRR (the loops share the listener),
// or its TCP data connection, configured as the spec asks.
func streamConns(t spec.Test, pt *pendingTest, dp *dataPath) ([]endpoint.Conn, error) {
	conns := make([]endpoint.Conn, 0, len(t.Streams()))
	for i, st := range t.Streams() {
		var c net.Conn
		switch {
		case t.Kind.UDP():
			c = dp.udp[i]
		case t.Kind == spec.TCPCRR:
		default:
			tc := pt.got[st.ID]
			if err := engine.Configure(tc, engine.ServerOptions(t, st)); err != nil {
				return nil, err
			}
			c = tc
		}
		conns = append(conns, endpoint.Conn{ID: st.ID, Dir: st.Dir, Conn: c})
	}
	return conns, nil
}

// watchControl watches the control connection while a test (what names
// it in errors) runs: an abort, a closed connection or a protocol error
// cancels the run. The function it returns stops the watch and reports
// why the run was cancelled, or nil for an abort or no cancellation.
func watchControl(msgs <-chan recvd, cancel context.CancelFunc, what string) (stop func() error) {
	done := make(chan struct{})
	watched := make(chan error, 1)
	go func() {
		var err error
		select {
		case m, ok := <-msgs:
			switch {
			case !ok || m.err != nil:
				err = fmt.Errorf("control connection lost during %s: %v", what, m.err)
			case m.msg.Type != control.TypeAbort:
				err = fmt.Errorf("unexpected %q message during %s", m.msg.Type, what)
			}
			cancel()
		case <-done:
		}
		watched <- err
	}()
	return func() error {
		close(done)
		return <-watched
	}
}
