package iperf3

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"

	"wirespeed/internal/engine"
	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
)

// ServerConfig is what a Server needs. Zero values mean the defaults.
type ServerConfig struct {
	Logger *slog.Logger
	// Admit takes one of the server's test slots for a new test; it
	// returns the function that frees it, or false when the server is
	// busy (the client is then told ACCESS_DENIED, as iperf3 does). Nil
	// admits every test.
	Admit func() (release func(), ok bool)
	// HandshakeTimeout bounds the rest of the cookie; default 5s.
	HandshakeTimeout time.Duration
	// StreamsTimeout bounds the arrival of a test's streams; default 10s.
	StreamsTimeout time.Duration
	// ReadTimeout bounds every wait for the client's next message
	// outside the test itself; default ReadTimeout.
	ReadTimeout time.Duration
	// MaxTestLength bounds a test without a time (-n, -k), warm-up
	// included: the server ends it then, telling the client
	// SERVER_TERMINATE. Default spec.MaxDuration. (A timed test is held
	// to its own time plus TestGrace; Limit says whether its time is
	// allowed.)
	MaxTestLength time.Duration
	// Refused, when set, logs a connection refused before it became a
	// test (a bad cookie, a stray stream), so that the caller may sample
	// such lines; nil logs each through log at Info.
	Refused func(log *slog.Logger, reason, msg string, args ...any)
	// OnDone, when set, is called with what each test measured.
	OnDone func(Summary)
	// Limit, when set, says why a test the client asks for is over the
	// server's limits ("" when it is not); the client is then told
	// SERVER_ERROR and the reason is logged.
	Limit func(Params) string
	// Reserve, when set, takes what a test the client asks for needs of
	// the server's shared resources (its memory budget) and returns the
	// function that gives it back, or why there is no room ("": there
	// is); the client is then told SERVER_ERROR and the reason is logged.
	Reserve func(Params) (release func(), why string)
}

// Summary is what the server measured in one test, for logs and tests.
type Summary struct {
	Peer     string
	UDP      bool
	Streams  []StreamResult // this server's figures, by iperf3 stream id
	Client   []StreamResult // the client's figures
	Received int64          // bytes this server received, all streams
	Sent     int64          // bytes it sent
	Err      error
}

// Server serves iperf3 clients on connections another accept loop hands
// it, after sniffing their first bytes (LooksLikeCookie). It is safe for
// concurrent use.
type Server struct {
	cfg ServerConfig
	log *slog.Logger

	mu    sync.Mutex
	tests map[Cookie]*serverTest // tests waiting for their TCP streams

	// udpMu serializes the UDP stream setup of tests: it binds the
	// control port over UDP, one socket at a time.
	udpMu sync.Mutex
}

// NewServer returns a server with cfg's defaults filled in.
func NewServer(cfg ServerConfig) *Server {
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 5 * time.Second
	}
	if cfg.StreamsTimeout <= 0 {
		cfg.StreamsTimeout = StreamsTimeout
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = ReadTimeout
	}
	if cfg.MaxTestLength <= 0 {
		cfg.MaxTestLength = spec.MaxDuration
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Refused == nil {
		cfg.Refused = func(log *slog.Logger, reason, msg string, args ...any) {
			log.Info(msg, append(args, "reason", reason)...)
		}
	}
	return &Server{cfg: cfg, log: log, tests: map[Cookie]*serverTest{}}
}

// Handle serves one connection whose first bytes, already read, are
// first (at most CookieLen). seq is the connection's place in the accept
// order: a test's streams are told apart by the order the client opened
// them. Handle closes c and returns when the connection's part is done:
// at once for a data stream (the test's control connection takes it
// over), at the end of the test for a control connection.
func (s *Server) Handle(ctx context.Context, c net.Conn, first []byte, seq uint64) {
	s.HandleUntil(ctx, c, first, seq, time.Now().Add(s.cfg.HandshakeTimeout))
}

// HandleUntil is Handle for a connection whose handshake deadline was
// set by the caller when it read the first bytes: the rest of the cookie
// must arrive by deadline, not within a new HandshakeTimeout.
func (s *Server) HandleUntil(ctx context.Context, c net.Conn, first []byte, seq uint64, deadline time.Time) {
	peer := c.RemoteAddr().String()
	buf := make([]byte, CookieLen)
	n := copy(buf, first)
	c.SetReadDeadline(deadline)
	if _, err := io.ReadFull(c, buf[n:]); err != nil {
		s.cfg.Refused(s.log, "iperf3_no_cookie", "iperf3 connection closed before its cookie", "peer", peer, "err", err)
		c.Close()
		return
	}
	cookie, err := ParseCookie(buf)
	if err != nil {
		s.cfg.Refused(s.log, "iperf3_bad_cookie", "bad iperf3 cookie, connection closed", "peer", peer, "err", err)
		c.Close()
		return
	}
	s.mu.Lock()
	t := s.tests[cookie]
	s.mu.Unlock()
	if t != nil {
		t.addStream(c, seq, s.log, s.cfg.Refused)
		return
	}
	s.control(ctx, c, cookie)
}

// serverTest is a test whose control connection waits for its streams.
type serverTest struct {
	peer    netip.Addr
	want    int
	mu      sync.Mutex
	got     []acceptedStream
	closed  bool
	arrived chan struct{}
}

type acceptedStream struct {
	c   *net.TCPConn
	seq uint64
}

func (t *serverTest) addStream(c net.Conn, seq uint64, log *slog.Logger, refused func(*slog.Logger, string, string, ...any)) {
	tc, _ := c.(*net.TCPConn)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case tc == nil || t.closed || len(t.got) >= t.want:
		refused(log, "iperf3_stray_stream", "iperf3 stream for no waiting test, closed", "peer", c.RemoteAddr().String())
		c.Close()
		return
	case addrOf(c.RemoteAddr()) != t.peer:
		refused(log, "iperf3_stream_other_address", "iperf3 stream from another address than its test's control connection, closed",
			"peer", c.RemoteAddr().String(), "control_peer", t.peer.String())
		c.Close()
		return
	}
	c.SetDeadline(time.Time{})
	t.got = append(t.got, acceptedStream{tc, seq})
	if len(t.got) == t.want {
		close(t.arrived)
	}
}

// take returns the streams in the order they were accepted, or closes
// them all when the test gave up.
func (t *serverTest) take(ok bool) []*net.TCPConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	slices.SortFunc(t.got, func(a, b acceptedStream) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	var out []*net.TCPConn
	for _, a := range t.got {
		if ok {
			out = append(out, a.c)
		} else {
			a.c.Close()
		}
	}
	return out
}

func addrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(ta.IP)
		return ip.Unmap()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap.Addr().Unmap()
}

// errno values sent with SERVER_ERROR, for the client's message.
const (
	errnoInval     = int32(syscall.EINVAL)
	errnoNotSup    = int32(95) // EOPNOTSUPP on Linux, which iperf3 clients print as "Operation not supported"
	errnoTimedOut  = int32(110)
	errnoConnReset = int32(104)
)

// control runs one test for the iperf3 client on c.
func (s *Server) control(ctx context.Context, c net.Conn, cookie Cookie) {
	defer c.Close()
	peer := c.RemoteAddr().String()
	log := s.log.With("peer", peer, "protocol", "iperf3")
	cc := conn{c}
	if s.cfg.Admit != nil {
		release, ok := s.cfg.Admit()
		if !ok {
			log.Info("iperf3 test refused: busy")
			cc.writeState(AccessDenied)
			return
		}
		defer release()
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	// A server shutting down tells the client, then ends the test.
	var terminated bool
	var termMu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		termMu.Lock()
		terminated = true
		termMu.Unlock()
		cc.writeState(ServerTerminate)
		c.SetDeadline(time.Unix(1, 0))
	})
	defer stop()

	sum, err := s.test(ctx, cc, cookie, log)
	sum.Peer = peer
	sum.Err = err
	termMu.Lock()
	if terminated && err != nil {
		err = fmt.Errorf("server shutting down: %w", err)
	}
	termMu.Unlock()
	if s.cfg.OnDone != nil {
		s.cfg.OnDone(sum)
	}
	var clientBytes int64
	for _, st := range sum.Client {
		clientBytes += st.Bytes
	}
	if err != nil {
		log.Info("iperf3 test failed", "err", err, "received", sum.Received, "sent", sum.Sent)
		return
	}
	log.Info("iperf3 test done", "udp", sum.UDP, "streams", len(sum.Streams), "received", sum.Received, "sent", sum.Sent, "client_bytes", clientBytes)
}

// fail sends SERVER_ERROR and returns err.
func fail(cc conn, code, errno int32, err error) error {
	cc.writeServerError(code, errno)
	return err
}

// checkParams refuses what this server does not run, in words for the
// log; the client sees iperf3's own text for the code sent.
func checkParams(p Params) error {
	switch {
	case p.AuthToken != "":
		return errors.New("the client sent credentials (--username): this server has no iperf3 authentication")
	case p.MSS > 0:
		return errors.New("the client set the MSS (-M), which this server does not")
	case p.Time == 0 && p.Num == 0 && p.BlockCount == 0:
		return errors.New("the client asked for an endless test (-t 0)")
	case p.UDP && p.Len != 0 && p.Len < spec.MinDatagram:
		return fmt.Errorf("UDP datagrams of %d bytes are shorter than %d", p.Len, spec.MinDatagram)
	case p.UDP && p.Len > spec.MaxDatagram:
		return fmt.Errorf("UDP datagrams of %d bytes are longer than %d", p.Len, spec.MaxDatagram)
	case p.FQRate > 0:
		return errors.New("the client asked for fair-queue pacing (--fq-rate), which this server does not")
	}
	return nil
}

// stream is one data stream of a test on the server.
type stream struct {
	id    int // iperf3's
	sends bool
	conn  net.Conn
	loop  engine.SocketLoop
	base  engine.Counters // at the start of the results' window
	// atEnd is a sender's counters as TEST_END was read: what it sent
	// during the test. Its loop stops a moment later (on a busy host,
	// hundreds of milliseconds: the client, which reads on after
	// TEST_END without counting, then saw a quarter of "sent" go
	// missing); iperf3's own server stops within its one loop. On TCP
	// its bytes are what the kernel had taken from the writes
	// (sentTCP), so a write still in progress counts what it delivered.
	atEnd engine.Counters
	// retrans and congestion are a TCP sender's, read from its socket
	// at TEST_END with atEnd: the loop closes the socket when it stops.
	retrans    int64
	congestion string
	done       chan struct{} // closed when the loop returned
	err        error
}

// drainIdle and drainMax bound how long a receiving stream reads on after
// TEST_END: until nothing arrived for drainIdle, at most drainMax. The
// client stopped sending before TEST_END, so this reads what was in
// flight, and the two sides' byte counts agree.
const (
	drainIdle = 100 * time.Millisecond
	drainMax  = 3 * time.Second
)

func (s *Server) test(ctx context.Context, cc conn, cookie Cookie, log *slog.Logger) (Summary, error) {
	var sum Summary
	if err := cc.writeState(ParamExchange); err != nil {
		return sum, err
	}
	b, err := cc.readJSON(MaxParamsLen, s.cfg.ReadTimeout)
	if err != nil {
		return sum, fail(cc, errRecvParams, errnoInval, fmt.Errorf("parameters: %w", err))
	}
	p, err := ParseParams(b)
	if err != nil {
		return sum, fail(cc, errRecvParams, errnoInval, err)
	}
	if err := checkParams(p); err != nil {
		return sum, fail(cc, errRecvParams, errnoNotSup, err)
	}
	if p.Len == 0 {
		p.Len = spec.DefaultSendSize
		if p.UDP {
			p.Len = spec.DefaultUDPSize
		}
	}
	if err := checkAmount(p); err != nil {
		return sum, fail(cc, errRecvParams, errnoInval, err)
	}
	if s.cfg.Limit != nil {
		if why := s.cfg.Limit(p); why != "" {
			return sum, fail(cc, errRecvParams, errnoInval, errors.New(why))
		}
	}
	if s.cfg.Reserve != nil {
		release, why := s.cfg.Reserve(p)
		if why != "" {
			return sum, fail(cc, errRecvParams, errnoInval, errors.New(why))
		}
		defer release()
	}
	sum.UDP = p.UDP
	n := p.Streams()
	peer := addrOf(cc.c.RemoteAddr())
	log.Info("iperf3 test requested", "udp", p.UDP, "streams", n, "reverse", p.Reverse, "bidir", p.Bidirectional,
		"time", p.Time, "len", p.Len, "client_version", p.ClientVersion)

	var conns []net.Conn
	if p.UDP {
		conns, err = s.udpStreams(ctx, cc, p, peer, log)
		if err != nil {
			return sum, err
		}
	} else {
		t := &serverTest{peer: peer, want: n, arrived: make(chan struct{})}
		s.mu.Lock()
		s.tests[cookie] = t
		s.mu.Unlock()
		unregister := func() {
			s.mu.Lock()
			delete(s.tests, cookie)
			s.mu.Unlock()
		}
		if err := cc.writeState(CreateStreams); err != nil {
			unregister()
			t.take(false)
			return sum, err
		}
		tm := time.NewTimer(s.cfg.StreamsTimeout)
		select {
		case <-t.arrived:
		case <-tm.C:
		case <-ctx.Done():
		}
		tm.Stop()
		unregister()
		select {
		case <-t.arrived:
			for _, tc := range t.take(true) {
				conns = append(conns, tc)
			}
		default:
			t.take(false)
			return sum, fail(cc, errAcceptStream, errnoTimedOut, fmt.Errorf("only %d of %d streams arrived within %v", len(t.got), n, s.cfg.StreamsTimeout))
		}
	}
	streams, err := s.loops(p, conns)
	if err != nil {
		for _, c := range conns {
			c.Close()
		}
		return sum, fail(cc, errInitTest, errnoInval, err)
	}
	defer func() {
		// The loops own their sockets (some take them out of the
		// connection): close through them.
		for _, st := range streams {
			st.loop.Close()
			st.conn.Close()
		}
	}()
	return s.run(ctx, cc, p, streams, log)
}

// udpStreams sets up a UDP test's streams: a socket bound to the control
// port receives each stream's hello from the control connection's
// address only, is connected to its sender, and answers from there; the
// next stream's socket is bound before the answer goes out. Nothing is
// sent to an address that did not first send the hello.
func (s *Server) udpStreams(ctx context.Context, cc conn, p Params, peer netip.Addr, log *slog.Logger) ([]net.Conn, error) {
	s.udpMu.Lock()
	defer s.udpMu.Unlock()
	la, ok := cc.c.LocalAddr().(*net.TCPAddr)
	if !ok {
		return nil, fail(cc, errInitTest, errnoInval, fmt.Errorf("control connection is not TCP"))
	}
	local, _ := netip.AddrFromSlice(la.IP)
	local = local.Unmap()
	network := "udp4"
	if local.Is6() {
		network = "udp6"
	}
	bind := netip.AddrPortFrom(local, uint16(la.Port)).String()
	n := p.Streams()
	open := func(k int) (*net.UDPConn, error) {
		opts := engine.Options{SockBuf: p.Window}
		if opts.SockBuf == 0 && !serverSends(p, k) {
			opts.SockBuf = engine.UDPReceiveBuffer
		}
		return engine.ListenUDPShared(ctx, network, bind, opts)
	}
	var conns []net.Conn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	ln, err := open(0)
	if err != nil {
		return nil, fail(cc, errInitTest, errnoInval, fmt.Errorf("bind UDP %s: %w", bind, err))
	}
	if err := cc.writeState(CreateStreams); err != nil {
		ln.Close()
		return nil, err
	}
	deadline := time.Now().Add(s.cfg.StreamsTimeout)
	stop := context.AfterFunc(ctx, func() { ln.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := make([]byte, 64)
	dropped := 0
	for k := 0; k < n; {
		ln.SetReadDeadline(deadline)
		m, from, err := ln.ReadFromUDPAddrPort(buf)
		if err != nil {
			ln.Close()
			closeAll()
			return nil, fail(cc, errAcceptStream, errnoTimedOut, fmt.Errorf("only %d of %d UDP streams arrived within %v: %w", k, n, s.cfg.StreamsTimeout, err))
		}
		if from.Addr().Unmap() != peer || m != len(udpHello) {
			dropped++
			continue
		}
		ln.SetReadDeadline(time.Time{})
		if err := engine.ConnectUDP(ln, from); err != nil {
			ln.Close()
			closeAll()
			return nil, fail(cc, errAcceptStream, errnoInval, err)
		}
		conns = append(conns, ln)
		cur := ln
		k++
		if k < n {
			if ln, err = open(k); err != nil {
				closeAll()
				return nil, fail(cc, errInitTest, errnoInval, fmt.Errorf("bind UDP %s: %w", bind, err))
			}
			stop()
			stop = context.AfterFunc(ctx, func() { ln.SetReadDeadline(time.Unix(1, 0)) })
		}
		if _, err := cur.Write(udpReply); err != nil {
			if k < n {
				ln.Close()
			}
			closeAll()
			return nil, fail(cc, errAcceptStream, errnoConnReset, fmt.Errorf("answer UDP stream %d: %w", k, err))
		}
	}
	if dropped > 0 {
		log.Warn("dropped UDP datagrams on the iperf3 port that were not a stream hello from the client", "count", dropped)
	}
	return conns, nil
}

// serverSends reports whether the server sends on the k-th stream: all
// of them with -R; the second half with --bidir (the client opens its
// sending streams first).
func serverSends(p Params, k int) bool {
	return p.Reverse || p.Bidirectional && k >= p.Parallel
}

// amountTest is the test whose amount the server's sending streams share:
// the client's -n or -k over its -P streams of p.Len-byte sends (the
// default length filled in).
func amountTest(p Params) spec.Test {
	t := spec.Test{Kind: spec.TCPStream, SendSize: p.Len, Parallel: max(p.Parallel, 1), AmountBytes: p.Num, AmountBlocks: p.BlockCount}
	if p.UDP {
		t.Kind = spec.UDPStream
	}
	return t
}

// checkAmount refuses a -n or -k for the server's own sending that
// wirespeed's own server refuses (spec.Test.CheckAmount): a count beyond
// spec.MaxAmount, whose bytes could overflow, or fewer bytes than streams,
// which would leave a stream a share of 0, and 0 is no limit. In a test
// the server only receives, the client counts the amount, and it passes.
func checkAmount(p Params) error {
	if !p.Reverse && !p.Bidirectional {
		return nil
	}
	if err := amountTest(p).CheckAmount(); err != nil {
		return fmt.Errorf("the client's amount for this server to send (-n, -k with -R or --bidir): %w", err)
	}
	return nil
}

// amountShare is what the i-th (0-based) of the server's sending streams
// sends of the client's -n or -k: the total shared evenly, as wirespeed's
// own streams share it (spec.Test.AmountShare), whole datagrams for UDP;
// 0 for none. checkAmount passed first.
func amountShare(p Params, i int) int64 {
	return amountTest(p).AmountShare(i)
}

// loops builds each stream's engine loop.
func (s *Server) loops(p Params, conns []net.Conn) ([]*stream, error) {
	var payload *engine.Payload
	var out []*stream
	sent := -1 // the sending stream's index among them
	for k, c := range conns {
		st := &stream{id: streamID(k), sends: serverSends(p, k), conn: c, done: make(chan struct{})}
		out = append(out, st)
		if st.sends {
			sent++
		}
		if st.sends && payload == nil {
			pl, err := engine.NewPayload(spec.PayloadRandom, nil, p.Len)
			if err != nil {
				return out, err
			}
			payload = pl
		}
		var err error
		switch c := c.(type) {
		case *net.TCPConn:
			if err = engine.Configure(c, engine.Options{SockBuf: p.Window, CongestionControl: p.Congestion, NoDelay: p.NoDelay}); err != nil {
				return out, err
			}
			if st.sends {
				var ts *engine.TCPSender
				if ts, err = engine.NewTCPSender(c, payload, p.Len); err == nil {
					// iperf3's -b on TCP is per stream, as wirespeed's.
					ts.SetRate(float64(p.Bandwidth))
					ts.SetLimit(amountShare(p, sent))
					st.loop = ts
				}
			} else {
				st.loop, err = engine.NewTCPReceiver(c, max(p.Len, spec.DefaultRecvSize))
			}
		case *net.UDPConn:
			hdr := engine.Iperf3Header(p.UDPCounters64)
			if st.sends {
				var us *engine.UDPSender
				if us, err = engine.NewUDPSender(c, payload, p.Len, float64(p.Bandwidth), hdr); err == nil {
					us.SetLimit(amountShare(p, sent) / int64(max(p.Len, 1)))
					st.loop = us
				}
			} else {
				st.loop, err = engine.NewUDPReceiver(c, p.Len, hdr)
			}
		default:
			err = fmt.Errorf("stream %d: unexpected socket %T", st.id, c)
		}
		if err != nil {
			return out, fmt.Errorf("stream %d: %w", st.id, err)
		}
	}
	return out, nil
}

// run is the test once its streams are set up, in the protocol's steps:
// start the loops (begin), wait for the client's TEST_END (awaitEnd),
// stop the senders and drain the receivers (stopStreams), count this
// side's figures (tally) and exchange results (exchange).
func (s *Server) run(ctx context.Context, cc conn, p Params, streams []*stream, log *slog.Logger) (Summary, error) {
	sr := &serverRun{s: s, cc: cc, p: p, streams: streams, log: log, sum: Summary{UDP: p.UDP}}
	if err := sr.begin(); err != nil {
		return sr.sum, err
	}
	// Each loop keeps an OS thread and its P while it runs (see
	// engine.AddProcs).
	defer engine.AddProcs(len(streams))()
	sr.startLoops()
	stopOmit := sr.startOmit()
	defer stopOmit()
	end, err := sr.awaitEnd(ctx)
	if err != nil {
		return sr.sum, err
	}
	sr.stopStreams()
	mine := sr.tally(end)
	err = sr.exchange(mine) // it adds the client's figures to sr.sum
	return sr.sum, err
}

// A serverRun is what the phases of one iperf3 test's run on this
// server share (Server.run).
type serverRun struct {
	s       *Server
	cc      conn
	p       Params
	streams []*stream
	log     *slog.Logger
	// start is when the test started, cpu0 (or cpuErr) the process's
	// CPU then.
	start  time.Time
	cpu0   measure.ProcessCPU
	cpuErr error
	// windowStart is when the results' window opened: the start, or the
	// end of the warm-up, whose timer writes it and the streams' base
	// under baseMu.
	baseMu      sync.Mutex
	windowStart time.Time
	sum         Summary
}

// begin tells the client the test starts and runs (TEST_START,
// TEST_RUNNING), and notes the time and the process's CPU.
func (sr *serverRun) begin() error {
	if err := sr.cc.writeState(TestStart); err != nil {
		return err
	}
	if err := sr.cc.writeState(TestRunning); err != nil {
		return err
	}
	sr.start = time.Now()
	sr.cpu0, sr.cpuErr = measure.ReadProcessCPU()
	sr.windowStart = sr.start
	return nil
}

// startLoops runs each stream's loop in a goroutine of its own, which
// closes the stream's done when the loop returns.
func (sr *serverRun) startLoops() {
	for _, st := range sr.streams {
		go func() {
			defer close(st.done)
			st.err = st.loop.Run()
		}()
	}
}

// stopAll stops every loop and waits for all of them to return.
func (sr *serverRun) stopAll() {
	for _, st := range sr.streams {
		st.loop.Stop()
	}
	for _, st := range sr.streams {
		<-st.done
	}
}

// startOmit leaves the warm-up (--omit) out: when it ends, the window
// starts anew and the streams' counters restart (their base). It returns
// the function that stops the warm-up's timer.
func (sr *serverRun) startOmit() (stop func()) {
	if sr.p.Omit <= 0 {
		return func() {}
	}
	omit := time.AfterFunc(time.Duration(sr.p.Omit)*time.Second, func() {
		sr.baseMu.Lock()
		defer sr.baseMu.Unlock()
		sr.windowStart = time.Now()
		for _, st := range sr.streams {
			st.base = st.loop.Counters()
		}
	})
	return func() { omit.Stop() }
}

// awaitEnd waits for the client's TEST_END and returns when it was
// read. A timed test ends with the client's TEST_END, which may come
// TestGrace late at most. A byte or block count test (-n, -k) has no
// length of its own: the server ends it at MaxTestLength, telling the
// client SERVER_TERMINATE. When the test ends any other way, awaitEnd
// stops the loops and returns why.
func (sr *serverRun) awaitEnd(ctx context.Context) (time.Time, error) {
	p, cfg := sr.p, sr.s.cfg
	limit := time.Duration(p.Omit+p.Time)*time.Second + TestGrace
	var cut <-chan time.Time
	if p.Time == 0 {
		limit = cfg.MaxTestLength + TestGrace
		tm := time.NewTimer(cfg.MaxTestLength)
		defer tm.Stop()
		cut = tm.C
	}
	stateCh := make(chan stateResult, 1)
	go func() {
		st, err := sr.cc.readState(limit)
		stateCh <- stateResult{st, err}
	}()
	var got stateResult
	select {
	case got = <-stateCh:
	case <-cut:
		// Tell the client, and let it close first (it does at once): a
		// client sending at full speed into streams closed under it
		// would report the reset instead of the termination.
		sr.cc.writeState(ServerTerminate)
		sr.cc.c.SetReadDeadline(time.Now().Add(time.Second))
		<-stateCh
		sr.stopAll()
		return time.Time{}, fmt.Errorf("ended at the server's longest test, %v: a byte or block count (-n, -k) test runs at most that long", cfg.MaxTestLength)
	case <-ctx.Done():
		got = <-stateCh // the shutdown notice unblocks the read
	}
	end := time.Now()
	return end, sr.checkEnd(got)
}

// checkEnd returns nil when the state the client sent is TEST_END; for
// any other state, or a failed read, it stops the loops and returns why.
func (sr *serverRun) checkEnd(got stateResult) error {
	switch {
	case got.err != nil:
		sr.stopAll()
		return fmt.Errorf("waiting for TEST_END: %w", got.err)
	case got.s == ClientTerminate:
		sr.stopAll()
		return errors.New("the client ended the test (CLIENT_TERMINATE)")
	case got.s != TestEnd:
		sr.stopAll()
		return fail(sr.cc, errCtrlMessage, 0, fmt.Errorf("%w: got %v during the test, want TEST_END", ErrProtocol, got.s))
	}
	return nil
}

// stopStreams ends the loops after TEST_END. Senders stop and close
// now, as iperf3's server does: the client reads its streams to their
// end; their counts are taken first (senderAtEnd). Receivers read what
// is still in flight (drain). Every loop has returned when it returns.
func (sr *serverRun) stopStreams() {
	for _, st := range sr.streams {
		if st.sends {
			senderAtEnd(st)
			st.loop.Stop()
		}
	}
	for _, st := range sr.streams {
		if st.sends {
			<-st.done
			st.loop.Close()
		}
	}
	drain(sr.streams)
	sr.stopAll()
}

// senderAtEnd notes a sending stream's counters as TEST_END was read
// (atEnd): on TCP the bytes its kernel took (sentTCP), at least the
// loop's count, and its retransmits and congestion control.
func senderAtEnd(st *stream) {
	st.atEnd = st.loop.Counters()
	if _, ok := st.conn.(*net.TCPConn); ok {
		if n, ti, err := sentTCP(st.loop); err == nil {
			st.atEnd.Bytes = max(st.atEnd.Bytes, n)
			st.retrans = ti.TotalRetrans
		}
		if si, err := st.loop.Info(); err == nil {
			st.congestion = si.CongestionControl
		}
	}
}

// tally counts this side's figures as of end (TEST_END) into the results
// it sends the client, and into the summary: the process's CPU over the
// test, and each stream's figures over the window.
func (sr *serverRun) tally(end time.Time) Results {
	sr.baseMu.Lock()
	elapsed := end.Sub(sr.windowStart).Seconds()
	sr.baseMu.Unlock()
	mine := Results{SenderHasRetransmits: -1}
	if sr.cpuErr == nil {
		if cpu1, err := measure.ReadProcessCPU(); err == nil && elapsed > 0 {
			d := cpu1.Sub(sr.cpu0)
			wall := end.Sub(sr.start).Seconds()
			mine.CPUUtilUser = 100 * d.User.Seconds() / wall
			mine.CPUUtilSystem = 100 * d.System.Seconds() / wall
			mine.CPUUtilTotal = mine.CPUUtilUser + mine.CPUUtilSystem
		}
	}
	for _, st := range sr.streams {
		r := sr.streamResult(st, elapsed, &mine)
		if st.sends {
			sr.sum.Sent += r.Bytes
		} else {
			sr.sum.Received += r.Bytes
		}
		sr.sum.Streams = append(sr.sum.Streams, r)
		mine.Streams = append(mine.Streams, r)
	}
	return mine
}

// streamResult is one stream's figures over the window of elapsed
// seconds; it notes in mine whether the sender counts retransmits and
// the congestion control used.
func (sr *serverRun) streamResult(st *stream, elapsed float64, mine *Results) StreamResult {
	ctr := st.loop.Counters()
	if st.sends {
		ctr = st.atEnd
	}
	r := StreamResult{ID: st.id, Bytes: ctr.Bytes - st.base.Bytes, Retransmits: -1, EndTime: max(elapsed, 0)}
	if st.err != nil {
		sr.log.Info("iperf3 stream ended with an error", "stream", st.id, "err", st.err)
	}
	switch st.conn.(type) {
	case *net.TCPConn:
		if st.sends {
			mine.SenderHasRetransmits = 1
			r.Retransmits = st.retrans
			mine.CongestionUsed = cmp.Or(st.congestion, mine.CongestionUsed)
		} else if mine.CongestionUsed == "" {
			if si, err := st.loop.Info(); err == nil {
				mine.CongestionUsed = si.CongestionControl
			}
		}
	case *net.UDPConn:
		if st.sends {
			if mine.SenderHasRetransmits < 0 {
				mine.SenderHasRetransmits = 0
			}
			r.Packets = ctr.Packets - st.base.Packets
		} else {
			r.Errors = ctr.Lost - st.base.Lost
			r.Packets = ctr.Packets - st.base.Packets + r.Errors
			r.Jitter = ctr.JitterNanos / 1e9
		}
	}
	return r
}

// exchange trades results with the client: EXCHANGE_RESULTS, the
// client's results (kept in the summary), this side's (mine), then
// DISPLAY_RESULTS; it waits for the client's IPERF_DONE, or its close,
// each read at most ReadTimeout.
func (sr *serverRun) exchange(mine Results) error {
	cc, timeout := sr.cc, sr.s.cfg.ReadTimeout
	if err := cc.writeState(ExchangeResults); err != nil {
		return err
	}
	b, err := cc.readJSON(MaxResultsLen, timeout)
	if err != nil {
		return fail(cc, errRecvResults, errnoInval, fmt.Errorf("client's results: %w", err))
	}
	theirs, err := ParseResults(b)
	if err != nil {
		return fail(cc, errRecvResults, errnoInval, err)
	}
	sr.sum.Client = theirs.Streams
	out, err := mine.Marshal()
	if err != nil {
		return err
	}
	if err := cc.writeJSON(out); err != nil {
		return fmt.Errorf("send results: %w", err)
	}
	if err := cc.writeState(DisplayResults); err != nil {
		return err
	}
	// The client answers IPERF_DONE, or just closes.
	if st, err := cc.readState(timeout); err == nil && st != IperfDone {
		sr.log.Info("iperf3 client ended with an unexpected state", "state", st)
	}
	return nil
}

// drain lets the receiving streams read on until nothing arrived for
// drainIdle or their sender's end, at most drainMax.
func drain(streams []*stream) {
	deadline := time.Now().Add(drainMax)
	last := make([]int64, len(streams))
	idleSince := time.Now()
	for time.Now().Before(deadline) {
		moved := false
		open := false
		for i, st := range streams {
			if st.sends {
				continue
			}
			select {
			case <-st.done:
				continue
			default:
			}
			open = true
			if b := st.loop.Counters().Bytes; b != last[i] {
				last[i], moved = b, true
			}
		}
		if !open {
			return
		}
		if moved {
			idleSince = time.Now()
		} else if time.Since(idleSince) >= drainIdle {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sentTCP returns how many bytes the kernel has taken from the writes on
// a TCP sender's socket, those the peer acknowledged (tcpi_bytes_acked)
// and those still queued (SIOCOUTQ), and the TCP_INFO it read. A write
// in progress counts the part the kernel copied, which the loop's
// counter adds only when the write returns; the client may already have
// read some of it.
func sentTCP(sock engine.Socket) (int64, measure.TCPInfo, error) {
	rc, err := sock.SyscallConn()
	if err != nil {
		return 0, measure.TCPInfo{}, err
	}
	var ti measure.TCPInfo
	n, err := takenBytes(func() (int64, error) {
		var err error
		ti, err = measure.ReadTCPInfo(rc)
		return ti.BytesAcked, err
	}, func() (int, error) { return engine.Unsent(sock) })
	return n, ti, err
}

// takenBytes is acked plus queued read as of one moment. The two come
// from two calls, and an acknowledgement between them moves bytes from
// the queue to the acked count: read queue first and acked second, as
// this did, and those bytes count twice (a busy server's -R -k 100 -l 64K
// reported 6684725 bytes sent, 131125 more than the blocks); the other
// way round they count not at all. So acked is read on both sides of the
// queue, and the sum taken when the two agree: nothing was acknowledged
// in between. The sender has stopped when this is asked, so the acks
// settle within a round trip; after takenTries disagreements the queue
// is summed with the acked count read before it, which can only count
// short (and the caller takes at least the loop's own count).
func takenBytes(acked func() (int64, error), queued func() (int, error)) (int64, error) {
	a, err := acked()
	if err != nil {
		return 0, err
	}
	for try := 1; ; try++ {
		q, err := queued()
		if err != nil {
			return 0, err
		}
		a2, err := acked()
		if err != nil {
			return 0, err
		}
		if a2 == a || try == takenTries {
			return a + int64(q), nil
		}
		a = a2
	}
}

// takenTries bounds takenBytes' reads of a socket whose acks keep coming.
const takenTries = 1000
