package iperf3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"wirespeed/internal/endpoint"
	"wirespeed/internal/engine"
	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// ClientConfig is what Run needs.
type ClientConfig struct {
	// Addr is the iperf3 server's host:port.
	Addr string
	// IPVersion restricts the address family: 0 for either, 4 or 6.
	IPVersion int
	Hostname  string // this host's name, for the result
	Logger    *slog.Logger
	// OnInterval, when set, receives this side's samples as they are
	// taken (the iperf3 server sends none). Called from one goroutine at
	// a time.
	OnInterval func(result.Tick)
	// ProcRoot is where /proc is mounted, for the local CPU figures.
	ProcRoot string
	// Payload is the content of a --payload file.
	Payload []byte
	// HandshakeTimeout bounds the connect; default 5s.
	HandshakeTimeout time.Duration
}

// CheckTest reports whether t can run against an iperf3 peer.
func CheckTest(t spec.Test) error {
	switch t.Kind {
	case spec.TCPStream, spec.TCPMaerts, spec.TCPBidir, spec.UDPStream:
	default:
		return fmt.Errorf("%s: %w: iperf3 runs TCP_STREAM, TCP_MAERTS (-R), TCP_BIDIR and UDP_STREAM", t.Kind, ErrUnsupported)
	}
	if t.LocalSockBuf != t.RemoteSockBuf && t.RemoteSockBuf != 0 && t.LocalSockBuf != 0 {
		return fmt.Errorf("iperf3 sets one window (-w) on both sides: give -s and -S the same size, or only one of them")
	}
	if t.MSS > maxMSS {
		return fmt.Errorf("--mss %d: iperf3 takes an MSS of at most %d", t.MSS, maxMSS)
	}
	return nil
}

// ParamsFor returns the parameters a client sends for t. iperf3 counts
// time in whole seconds: the duration and the warm-up are rounded up for
// the server's own timer, while this side still ends the test on t's.
func ParamsFor(t spec.Test) Params {
	p := Params{
		TCP:         !t.Kind.UDP(),
		UDP:         t.Kind.UDP(),
		Omit:        int(math.Ceil(t.Omit.Seconds())),
		Time:        max(1, int(math.Ceil(t.Duration.Seconds()))),
		Parallel:    t.Parallel,
		Reverse:     t.Kind == spec.TCPMaerts || t.Kind == spec.UDPStream && t.Reverse,
		Len:         t.SendSize,
		NoDelay:     t.NoDelay,
		Congestion:  t.CongestionControl,
		PacingTimer: 1000,
		// The socket options the protocol carries; the bind address,
		// device and client port are this side's alone.
		MSS:          t.MSS,
		TOS:          t.TOS,
		DontFragment: t.DontFragment,
	}
	p.Bidirectional = t.Kind == spec.TCPBidir
	p.Window = t.RemoteSockBuf
	if p.Window == 0 {
		p.Window = t.LocalSockBuf
	}
	// iperf3's -b paces TCP too, per stream, as wirespeed's does.
	p.Bandwidth = int64(t.RateBitsPerSecond)
	// A fixed amount: iperf3's -n and -k, the total over the streams.
	p.Num, p.BlockCount = t.AmountBytes, t.AmountBlocks
	return p
}

// Run runs t once against the iperf3 server at cfg.Addr and returns the
// joined result: this side's figures as wirespeed measures them, the
// server's from its results exchange. Interrupting ctx ends the test
// early (TEST_END), still exchanges results, and marks the result
// interrupted.
func Run(ctx context.Context, cfg ClientConfig, t spec.Test) (result.Result, error) {
	if err := t.Validate(); err != nil {
		return result.Result{}, err
	}
	if err := CheckTest(t); err != nil {
		return result.Result{}, err
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 5 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	network := "tcp"
	if cfg.IPVersion == 4 || cfg.IPVersion == 6 {
		network += strconv.Itoa(cfg.IPVersion)
	}
	d := engine.ControlDialer(engine.Options{LocalAddr: t.BindIP(), BindDev: t.BindDev}, cfg.HandshakeTimeout)
	c, err := d.DialContext(ctx, network, cfg.Addr)
	if err != nil {
		return result.Result{}, fmt.Errorf("connect to iperf3 server %s: %w", cfg.Addr, err)
	}
	defer c.Close()
	// Unblock any read or write when ctx ends before the test does.
	cl := &client{cfg: cfg, log: log, t: t, cc: conn{c}, cookie: NewCookie(), network: network}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	res, err := cl.run(ctx)
	if err != nil {
		// Tell the server, if it still listens, that this client is gone.
		c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		c.Write([]byte{uint8(ClientTerminate)})
		return res, fmt.Errorf("iperf3 server %s: %w", cfg.Addr, err)
	}
	return res, nil
}

type client struct {
	cfg     ClientConfig
	log     *slog.Logger
	t       spec.Test
	cc      conn
	cookie  Cookie
	network string
}

func (cl *client) run(ctx context.Context) (result.Result, error) {
	t := cl.t
	stop := context.AfterFunc(ctx, func() {
		// Before the test runs, an interrupt abandons it.
		cl.cc.c.SetReadDeadline(time.Unix(1, 0))
	})
	if _, err := cl.cc.c.Write(cl.cookie[:]); err != nil {
		stop()
		return result.Result{}, fmt.Errorf("send cookie: %w", err)
	}
	if err := cl.cc.expectState(ParamExchange, ReadTimeout); err != nil {
		stop()
		return result.Result{}, cl.explain(ctx, err)
	}
	params, err := ParamsFor(t).Marshal()
	if err != nil {
		stop()
		return result.Result{}, err
	}
	if err := cl.cc.writeJSON(params); err != nil {
		stop()
		return result.Result{}, fmt.Errorf("send parameters: %w", err)
	}
	if err := cl.cc.expectState(CreateStreams, ReadTimeout); err != nil {
		stop()
		return result.Result{}, cl.explain(ctx, err)
	}
	conns, err := cl.openStreams(ctx)
	if err != nil {
		stop()
		return result.Result{}, err
	}
	if err := cl.cc.expectState(TestStart, ReadTimeout); err != nil {
		stop()
		endpoint.CloseAll(conns)
		return result.Result{}, cl.explain(ctx, err)
	}
	if err := cl.cc.expectState(TestRunning, ReadTimeout); err != nil {
		stop()
		endpoint.CloseAll(conns)
		return result.Result{}, cl.explain(ctx, err)
	}
	if !stop() {
		endpoint.CloseAll(conns)
		return result.Result{}, ctx.Err()
	}
	return cl.measure(ctx, conns)
}

// explain turns a failed wait into what the user should know.
func (cl *client) explain(ctx context.Context, err error) error {
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w (is it an iperf3 server? a wirespeed server is reached without --iperf3)", err)
	}
	return err
}

// openStreams opens the test's data streams in iperf3's order (the
// client's sending streams first for --bidir), as spec.Test.Streams plans
// them.
func (cl *client) openStreams(ctx context.Context) ([]endpoint.Conn, error) {
	t := cl.t
	host, port, err := net.SplitHostPort(cl.cc.c.RemoteAddr().String())
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(host, port)
	var conns []endpoint.Conn
	for _, st := range t.Streams() {
		c, err := cl.openStream(ctx, st, addr)
		if err != nil {
			endpoint.CloseAll(conns)
			return nil, fmt.Errorf("data stream %d to %s: %w", st.ID, addr, err)
		}
		conns = append(conns, endpoint.Conn{ID: st.ID, Dir: st.Dir, Conn: c})
	}
	return conns, nil
}

func (cl *client) openStream(ctx context.Context, st spec.Stream, addr string) (net.Conn, error) {
	t := cl.t
	if !t.Kind.UDP() {
		tc, err := engine.Dial(ctx, cl.network, addr, engine.ClientOptions(t, st))
		if err != nil {
			return nil, err
		}
		tc.SetWriteDeadline(time.Now().Add(ReadTimeout))
		if _, err := tc.Write(cl.cookie[:]); err != nil {
			tc.Close()
			return nil, fmt.Errorf("send cookie: %w", err)
		}
		tc.SetWriteDeadline(time.Time{})
		return tc, nil
	}
	network := "udp" + cl.network[len("tcp"):]
	uc, err := engine.DialUDP(ctx, network, addr, engine.ClientOptions(t, st))
	if err != nil {
		return nil, err
	}
	// One hello, as iperf3 sends: a second one would reach the server's
	// connected socket as a datagram of the test.
	uc.SetDeadline(time.Now().Add(StreamsTimeout))
	defer uc.SetDeadline(time.Time{})
	if _, err := uc.Write(udpHello); err != nil {
		uc.Close()
		return nil, fmt.Errorf("send UDP stream hello: %w", err)
	}
	buf := make([]byte, 64)
	n, err := uc.Read(buf)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("no UDP stream reply from the server within %v (a firewall may drop UDP to its port): %w", StreamsTimeout, err)
	}
	if string(buf[:n]) != string(udpReply) {
		uc.Close()
		return nil, fmt.Errorf("%w: UDP stream reply %q, want %q", ErrProtocol, buf[:n], udpReply)
	}
	return uc, nil
}

// udpDrain bounds how long a UDP receiver reads on after its window: the
// server stops sending when it reads TEST_END, and there is no end of
// stream to wait for.
const udpDrain = 300 * time.Millisecond

// unsentTimeout bounds the wait for a sender's data to reach the server's
// kernel before TEST_END.
const unsentTimeout = 2 * time.Second

// peerReadGrace is how long the client waits, once every byte it sent is
// acknowledged, before TEST_END: iperf3's server (3.12) stops reading at
// TEST_END, and acknowledged bytes may still sit in its socket. Without
// it a -n 10M run against iperf3 -s counted 9.5-10.35 MB on the server in
// 3 of 40 runs on loopback; iperf3's own client does not wait at all.
const peerReadGrace = 100 * time.Millisecond

// measure runs this side's loops, ends the test and exchanges results,
// in the protocol's steps: run this side's senders and receivers
// (runLocal), wait until what it sent reached the server (awaitSent)
// and what it receives is in (awaitReceived), send TEST_END and wait
// for the receivers and the server's EXCHANGE_RESULTS (endTest), trade
// results (exchange) and join both sides (join).
func (cl *client) measure(ctx context.Context, conns []endpoint.Conn) (result.Result, error) {
	cr := cl.newClientRun(conns)
	defer cr.closeDups()
	sendCh, recvCh := cr.runLocal(ctx)
	// TEST_END goes when this side's senders are done and their data
	// reached the server, and no earlier than the planned end for the
	// receiving direction; or at once on an interrupt.
	end := time.NewTimer(cl.t.Omit + cl.t.Duration)
	defer end.Stop()
	sent := cr.awaitSent(ctx, sendCh)
	cr.awaitReceived(ctx, end.C)
	got, err := cr.endTest(recvCh)
	if err != nil {
		return result.Result{}, err
	}
	local := mergeSides(sent, got)
	local.Hostname = cl.cfg.Hostname
	theirs, err := cr.exchange(local)
	if err != nil {
		return result.Result{}, err
	}
	return cr.join(ctx, local, theirs, sent, got)
}

// A clientRun is what the phases of one test's run on the iperf3 client
// share (client.measure).
type clientRun struct {
	cl      *client
	started time.Time
	// sends and recvs are the streams this side sends and receives on.
	sends, recvs []endpoint.Conn
	// dups are duplicates of the sending TCP sockets: they outlive
	// endpoint.Run's close, so that this side can see its last bytes
	// reach the server's kernel.
	dups []engine.KeptSocket
	// mu serializes the two runs' calls of OnInterval.
	mu sync.Mutex
	// amountIn gets a value when all of a fixed amount (-n, -k) arrived:
	// the iperf3 server then stops sending and waits for TEST_END.
	amountIn chan struct{}
}

// newClientRun starts the run's clock and sorts conns into the streams
// this side sends and receives on, keeping a duplicate of each sending
// TCP socket (closeDups closes them).
func (cl *client) newClientRun(conns []endpoint.Conn) *clientRun {
	cr := &clientRun{cl: cl, started: time.Now(), amountIn: make(chan struct{}, 1)}
	for _, c := range conns {
		if c.Dir == spec.ClientToServer {
			cr.sends = append(cr.sends, c)
		} else {
			cr.recvs = append(cr.recvs, c)
		}
	}
	for _, c := range cr.sends {
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			if f, err := engine.Keep(tc); err == nil {
				cr.dups = append(cr.dups, f)
			}
		}
	}
	return cr
}

// closeDups closes the sending sockets' duplicates.
func (cr *clientRun) closeDups() {
	for _, f := range cr.dups {
		f.Close()
	}
}

// runLocal starts this side's two runs (endpoint.Run each), one over
// the sending streams and one over the receiving ones, in goroutines of
// their own; the channels it returns get their outcomes. A receiving
// UDP run reads on for udpDrain after its window; a TCP one to the
// server's close of its streams after TEST_END.
func (cr *clientRun) runLocal(ctx context.Context) (sendCh, recvCh <-chan sideResult) {
	recvDrain := time.Duration(0) // side's default: the server closes its streams after TEST_END
	if cr.cl.t.Kind.UDP() {
		recvDrain = udpDrain
	}
	sendCh = cr.runSide(ctx, cr.sends, 0, nil)
	recvCh = cr.runSide(ctx, cr.recvs, recvDrain, cr.amountReceived)
	return sendCh, recvCh
}

// runSide runs endpoint.Run over cs in a goroutine and returns the
// channel that gets its outcome; over no streams it is skipped at once.
func (cr *clientRun) runSide(ctx context.Context, cs []endpoint.Conn, drain time.Duration, received func()) <-chan sideResult {
	cl := cr.cl
	ch := make(chan sideResult, 1)
	if len(cs) == 0 {
		ch <- sideResult{skip: true}
		return ch
	}
	go func() {
		r, err := endpoint.Run(ctx, endpoint.Config{
			Spec:         cl.t,
			Side:         result.Local,
			Sends:        spec.ClientToServer,
			Conns:        cs,
			Payload:      cl.cfg.Payload,
			OnInterval:   cr.onInterval,
			ProcRoot:     cl.cfg.ProcRoot,
			UDPOptions:   []engine.UDPOption{engine.Iperf3Header(false)},
			DrainTimeout: drain,

			AmountReceived: received,
		})
		ch <- sideResult{res: r, err: err}
	}()
	return ch
}

// onInterval hands an interval report of either run to OnInterval, one
// at a time.
func (cr *clientRun) onInterval(r result.IntervalReport) {
	if cr.cl.cfg.OnInterval == nil {
		return
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.cl.cfg.OnInterval(result.JoinTick(r, nil))
}

// amountReceived tells awaitReceived that all of a fixed amount arrived.
func (cr *clientRun) amountReceived() {
	select {
	case cr.amountIn <- struct{}{}:
	default:
	}
}

// awaitSent waits for the sending run's outcome and, when it ended
// well and was not interrupted, for its data to reach the server's
// kernel (at most unsentTimeout) and peerReadGrace more.
func (cr *clientRun) awaitSent(ctx context.Context, sendCh <-chan sideResult) sideResult {
	sent := <-sendCh
	if len(cr.sends) > 0 && ctx.Err() == nil && sent.err == nil {
		t0 := time.Now()
		waitUnsent(cr.dups, unsentTimeout)
		// iperf3's server stops reading its streams at TEST_END: what
		// its kernel acknowledged but it has not read yet would be
		// missing from its count. Give it a moment to read.
		time.Sleep(peerReadGrace)
		cr.cl.log.Debug("sent data reached the iperf3 server", "wait", time.Since(t0))
	}
	return sent
}

// awaitReceived waits, when this side receives, for the planned end
// (end), all of a fixed amount, or an interrupt.
func (cr *clientRun) awaitReceived(ctx context.Context, end <-chan time.Time) {
	if len(cr.recvs) == 0 {
		return
	}
	select {
	case <-end:
	case <-ctx.Done():
	case <-cr.amountIn: // all of a fixed amount arrived (-n, -k)
	}
}

// endTest sends TEST_END, then waits for the receiving run's outcome,
// which it returns, and for the server's EXCHANGE_RESULTS (at most
// ReadTimeout plus 5 s): the server closes its streams and asks for
// results, and the receiving loops read to those ends meanwhile.
func (cr *clientRun) endTest(recvCh <-chan sideResult) (sideResult, error) {
	cl := cr.cl
	if err := cl.cc.writeState(TestEnd); err != nil {
		<-recvCh
		return sideResult{}, err
	}
	stateCh := make(chan stateResult, 1)
	go func() {
		s, err := cl.cc.readState(ReadTimeout + 5*time.Second)
		stateCh <- stateResult{s, err}
	}()
	got := <-recvCh
	st := <-stateCh
	if st.err == nil && st.s != ExchangeResults {
		st.err = fmt.Errorf("%w: got %v after TEST_END, want EXCHANGE_RESULTS", ErrProtocol, st.s)
	}
	if st.err != nil {
		return got, cl.explain(context.Background(), st.err)
	}
	return got, nil
}

// exchange sends this side's results (local, in iperf3's form), reads
// the server's, waits for DISPLAY_RESULTS and answers IPERF_DONE; each
// read waits at most ReadTimeout.
func (cr *clientRun) exchange(local result.SideResult) (Results, error) {
	cc := cr.cl.cc
	mine, err := clientResults(cr.cl.t, local).Marshal()
	if err != nil {
		return Results{}, err
	}
	if err := cc.writeJSON(mine); err != nil {
		return Results{}, fmt.Errorf("send results: %w", err)
	}
	b, err := cc.readJSON(MaxResultsLen, ReadTimeout)
	if err != nil {
		return Results{}, fmt.Errorf("read the server's results: %w", err)
	}
	theirs, err := ParseResults(b)
	if err != nil {
		return Results{}, err
	}
	if err := cc.expectState(DisplayResults, ReadTimeout); err != nil {
		return Results{}, err
	}
	cc.writeState(IperfDone)
	return theirs, nil
}

// join makes the test's result of this side's (local) and the server's
// figures (theirs), marked interrupted when ctx ended; a failure of
// either run (sent, got) fails it unless it was interrupted.
func (cr *clientRun) join(ctx context.Context, local result.SideResult, theirs Results, sent, got sideResult) (result.Result, error) {
	cl := cr.cl
	remote, warnings := remoteSide(cl.t, theirs)
	if err := result.CheckSide(remote, time.Since(cr.started).Seconds()+1); err != nil {
		return result.Result{}, fmt.Errorf("iperf3 server %s: its figures cannot be measured: %w", cl.cfg.Addr, err)
	}
	if local.CPU != nil && onThisHost(cl.cfg.Addr) {
		peerNotOther(local.CPU, "iperf3")
	}
	res := endpoint.Join(cl.t, local, remote, cr.started, cl.cfg.Hostname, cl.cfg.Addr)
	for _, w := range warnings {
		res.Warnings = append(res.Warnings, result.Words(w))
	}
	if ctx.Err() != nil {
		res.Interrupted = true
	}
	for _, r := range []sideResult{sent, got} {
		if r.err != nil && ctx.Err() == nil {
			return res, r.err
		}
	}
	return res, nil
}

type sideResult struct {
	res  result.SideResult
	err  error
	skip bool
}

type stateResult struct {
	s   State
	err error
}

// waitUnsent waits until every socket's sent data is acknowledged, at
// most timeout.
func waitUnsent(socks []engine.KeptSocket, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, f := range socks {
		for time.Now().Before(deadline) {
			n, err := engine.Unsent(f)
			if err != nil || n == 0 {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// mergeSides joins the sending and the receiving endpoint.Run of a
// two-direction test into one side's result.
func mergeSides(a, b sideResult) result.SideResult {
	switch {
	case a.skip:
		return b.res
	case b.skip:
		return a.res
	}
	r := a.res
	r.Flows = append(r.Flows, b.res.Flows...)
	r.Interrupted = r.Interrupted || b.res.Interrupted
	r.Warnings = append(r.Warnings, b.res.Warnings...)
	if r.Error == "" {
		r.Error = b.res.Error
	}
	if r.CPU == nil {
		r.CPU, r.CPUError = b.res.CPU, b.res.CPUError
	}
	if r.Counters == nil {
		r.Counters = b.res.Counters
	}
	return r
}

// onThisHost reports whether addr (HOST:PORT) is a loopback address: the
// iperf3 server then runs on this host.
func onThisHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback() || host == "localhost"
}

// peerNotOther takes the test's peer, a server on this host named name,
// out of the side's other processes: its CPU is the test's (as a
// wirespeed peer's is, limit's others), not another process's taken from
// the test. An iperf3 server sends no process id, so it is told by its
// name.
func peerNotOther(c *measure.CPU, name string) {
	kept := c.OtherProcesses[:0]
	for _, p := range c.OtherProcesses {
		if p.Name == name {
			c.OtherProcessesUtilPct -= p.UtilPct
			c.OtherProcessesHostUtilPct -= p.UtilPct
			continue
		}
		kept = append(kept, p)
	}
	c.OtherProcesses = kept
	c.OtherProcessesUtilPct = max(c.OtherProcessesUtilPct, 0)
	c.OtherProcessesHostUtilPct = max(c.OtherProcessesHostUtilPct, 0)
}
