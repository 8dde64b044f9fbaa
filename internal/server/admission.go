package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// Auth is the part of Config that says who may use the server: a key
// every client must prove, TLS on every control connection, or both.
// docs/security.md says what each promises and the test that proves it.
type Auth struct {
	// PSK, when set, is the pre-shared key every client must prove it
	// knows (HMAC-SHA256 challenge-response; docs/protocol.md). The server
	// proves it too.
	PSK []byte
	// TLS, when set, is required on every control connection. Data
	// connections stay plain TCP: the token that admits them travels only
	// inside the control connection.
	TLS *tls.Config
}

// Admission is the part of Config that bounds what one client may ask of the
// server: how much one test may ask for and how many connections one
// address may hold. docs/security.md lists what each setting promises and
// the test that proves it. Zero values mean the defaults below.
type Admission struct {
	// MaxDuration bounds one test's warm-up plus measurement window.
	MaxDuration time.Duration
	// MaxParallel bounds the streams per direction of one test (-P).
	MaxParallel int
	// MaxUDPRateBitsPerSecond bounds the rate at which a UDP_STREAM test
	// may make the server send (-R): the sum over its streams. A test
	// where the server would send as fast as it can (-R without -b) is
	// over any finite limit; +Inf lifts it. What a client sends, the
	// server cannot limit.
	MaxUDPRateBitsPerSecond float64
	// MaxConnsPerAddr bounds the authenticated control sessions open at
	// once from one IP address (one /64 for IPv6). Connections still in
	// their handshake do not count: a peer without the key cannot take
	// the places of those who have it behind the same address (NAT).
	MaxConnsPerAddr int
	// MaxHandshakeRate bounds how many control connections per second one
	// IP address (one /64 for IPv6) may start before authenticating, with
	// bursts of twice as many; the handshake deadline bounds how long
	// each lasts, so together they bound the unauthenticated connections
	// one address holds.
	MaxHandshakeRate float64
	// MaxTestMemory bounds the buffers one test makes the server allocate,
	// as worked out from its request (memory.go); MaxMemory bounds those
	// of all running tests together.
	MaxTestMemory int64
	MaxMemory     int64
	// MaxDSCP is the highest DSCP a client may have the server's packets
	// carry (--tos, --dscp): 0 means DefaultMaxDSCP, NoDSCP none but 0.
	MaxDSCP int
}

// DefaultMaxDSCP keeps the network control classes (CS6 and CS7, DSCP 48
// and up, which routers reserve for their own protocols) from a client:
// any other DSCP, EF (46) included, may be asked for.
const DefaultMaxDSCP = 47

// NoDSCP as Admission.MaxDSCP lets no client set the DSCP of the server's
// packets (serve --max-dscp 0).
const NoDSCP = -1

// Defaults of the limits.
const (
	DefaultMaxDuration             = 10 * time.Minute
	DefaultMaxParallel             = 32
	DefaultMaxUDPRateBitsPerSecond = 1e9
	DefaultMaxConnsPerAddr         = 8
	DefaultMaxHandshakeRate        = 20
)

// admission returns the admission limits with the defaults filled in.
func (s *Server) admission() Admission {
	l := s.cfg.Admission
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultMaxDuration
	}
	if l.MaxParallel <= 0 {
		l.MaxParallel = DefaultMaxParallel
	}
	if l.MaxUDPRateBitsPerSecond <= 0 {
		l.MaxUDPRateBitsPerSecond = DefaultMaxUDPRateBitsPerSecond
	}
	if l.MaxConnsPerAddr <= 0 {
		l.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	if l.MaxHandshakeRate <= 0 {
		l.MaxHandshakeRate = DefaultMaxHandshakeRate
	}
	if l.MaxTestMemory <= 0 {
		l.MaxTestMemory = DefaultMaxTestMemory
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = DefaultMaxMemory
	}
	switch {
	case l.MaxDSCP == 0:
		l.MaxDSCP = DefaultMaxDSCP
	case l.MaxDSCP < 0:
		l.MaxDSCP = 0
	}
	return l
}

// safety is the server's state for the protections. Its zero value is
// ready to use.
type safety struct {
	mu         sync.Mutex
	perAddr    map[netip.Prefix]int       // authenticated sessions per client address (IPv6: /64)
	handshakes handshakeRate              // unauthenticated control connections started, per address
	conns      map[*control.Conn]struct{} // control sessions past their hello, for a forced close
	closing    bool                       // forced close done: refuse new sessions

	draining atomic.Bool  // shutting down: no new tests
	running  atomic.Int32 // tests between request and result
	memory   atomic.Int64 // buffer bytes the running tests hold (memory.go)

	acceptDelay time.Duration // backoff after accept errors; accept goroutine only
	acceptLast  time.Time
}

// Reasons a test or a connection is refused, as logged and counted.
const (
	refusedBusy        = "busy"
	refusedInvalid     = "invalid_spec"
	refusedDuration    = "max_duration"
	refusedParallel    = "max_parallel"
	refusedUDPRate     = "max_udp_rate"
	refusedFrame       = "max_frame"
	refusedShutdown    = "shutting_down"
	refusedConnsPerAdr = "max_conns_per_addr"
	refusedHandshake   = "max_handshake_rate"
	refusedTestMemory  = "max_test_memory"
	refusedMemory      = "max_memory"
	refusedDSCP        = "max_dscp"
)

// testLimit says why t, which costs c, is over a limit, or returns ""
// when it is not.
func (s *Server) testLimit(t spec.Test, c testCost, streamed bool) (reason, msg string) {
	l := s.admission()
	switch {
	case t.Omit+t.Duration > l.MaxDuration:
		return refusedDuration, fmt.Sprintf("a test of %v (warm-up included) is over this server's limit of %v (serve --max-duration); ask for less with -l and --omit",
			t.Omit+t.Duration, l.MaxDuration)
	case t.Kind == spec.RRUL && rrulConns(t) > l.MaxParallel:
		return refusedParallel, fmt.Sprintf("RRUL with -P %d opens %d connections (%d flows and %d probes), over this server's limit of %d (serve --max-parallel); ask for fewer flows with -P",
			t.Parallel, rrulConns(t), t.Parallel*len(t.Directions()), spec.RRULProbeStreams, l.MaxParallel)
	case t.Parallel > l.MaxParallel:
		return refusedParallel, fmt.Sprintf("%d parallel streams per direction is over this server's limit of %d (serve --max-parallel); ask for fewer with -P",
			t.Parallel, l.MaxParallel)
	}
	if msg := s.testMemoryLimit(t, c); msg != "" {
		return refusedTestMemory, msg
	}
	if dscp := t.TOS >> 2; dscp > l.MaxDSCP {
		return refusedDSCP, fmt.Sprintf("a TOS of %#x (DSCP %d) is over this server's limit of DSCP %d (serve --max-dscp); ask for a lower --dscp or --tos, or none",
			t.TOS, dscp, l.MaxDSCP)
	}
	if msg := intervalLimit(t, streamed, control.DefaultMaxFrame); msg != "" {
		return refusedFrame, msg
	}
	if rate := t.ProbeRateBitsPerSecond(); rate > l.MaxUDPRateBitsPerSecond {
		return refusedUDPRate, fmt.Sprintf("RRUL's UDP probes every %v make this server echo %s, over its limit of %s (serve --max-udp-rate); probe less often with --probe-interval",
			t.RRUL.UDPProbeInterval, units.FormatBits(rate), units.FormatBits(l.MaxUDPRateBitsPerSecond))
	}
	if rate := udpRate(t); rate > l.MaxUDPRateBitsPerSecond {
		if math.IsInf(rate, 1) {
			return refusedUDPRate, fmt.Sprintf("a UDP test where this server sends as fast as it can (-R without -b) is over its limit of %s (serve --max-udp-rate); ask for a rate with -b",
				units.FormatBits(l.MaxUDPRateBitsPerSecond))
		}
		return refusedUDPRate, fmt.Sprintf("a UDP rate of %s from this server (-b times -P) is over its limit of %s (serve --max-udp-rate); ask for less with -b",
			units.FormatBits(rate), units.FormatBits(l.MaxUDPRateBitsPerSecond))
	}
	return "", ""
}

// rrulConns is how many of the server's connections an RRUL test takes:
// its flows in every direction and its probes. They count against
// --max-parallel together.
func rrulConns(t spec.Test) int { return t.Parallel*len(t.Directions()) + spec.RRULProbeStreams }

// probeEchoRate is the most UDP probes a second the server echoes for t:
// the rate the client asked for with a quarter of slack for a late
// timer, within the server's UDP limit. A client probing faster gets the
// rest of its probes dropped.
func (s *Server) probeEchoRate(t spec.Test) float64 {
	perSecond := 1.25 / t.RRUL.UDPProbeInterval.Seconds()
	if limit := s.admission().MaxUDPRateBitsPerSecond; limit > 0 && !math.IsInf(limit, 1) {
		perSecond = min(perSecond, limit/(spec.ProbeSize*8))
	}
	return perSecond
}

// udpRate is the rate at which a test would make the server send UDP:
// UDP_STREAM from the server, each stream paced to the asked rate, +Inf
// for as fast as possible; 0 when the server does not send UDP at that
// rate (it only receives, or answers requests one by one).
func udpRate(t spec.Test) float64 {
	if t.Kind != spec.UDPStream || !t.Reverse {
		return 0
	}
	if t.RateBitsPerSecond == 0 {
		return math.Inf(1)
	}
	return t.RateBitsPerSecond * float64(t.Parallel)
}

// refuseTest answers a test request that is over a limit, or that arrives
// while the server shuts down, and reports whether it did. The session
// goes on: the client may ask for less.
func (s *Server) refuseTest(cc *control.Conn, t spec.Test, fileLen int, streamed bool, log *slog.Logger) bool {
	if s.safety.draining.Load() {
		s.countRefused(refusedShutdown)
		log.Info("test refused", "test", t.Kind, "reason", refusedShutdown)
		cc.SendError(control.CodeBusy, "the server is shutting down; retry in a moment")
		return true
	}
	reason, msg := s.testLimit(t, costOf(t, fileLen, streamed), streamed)
	if reason == "" {
		return false
	}
	s.countRefused(reason)
	log.Info("test refused", "test", t.Kind, "reason", reason, "limit", msg)
	cc.SendError(control.CodeLimit, msg)
	return true
}

// refuseFrame tells the client that its last message was over the frame
// bound before the session ends. The rest of that frame is still on its
// way: read and drop it for a moment, so that closing does not reset the
// connection before the client reads the error.
func (s *Server) refuseFrame(cc *control.Conn, err error, log *slog.Logger) {
	if !errors.Is(err, control.ErrFrameTooBig) {
		return
	}
	s.countRefused(refusedFrame)
	log.Info("control message refused", "reason", refusedFrame, "err", err)
	cc.SendError(control.CodeLimit, fmt.Sprintf("%v: a control message is over this server's limit of %d bytes (serve --max-frame)", err, cc.MaxFrame()))
	lingerClose(cc.NetConn())
}

// lingerClose ends the write side of c and discards what the peer still
// sends, for at most a second and 16 MiB.
func lingerClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	io.CopyN(io.Discard, c, 16<<20)
}

// sessionGate is one admitted control session: its place among the
// sessions a forced close ends, its slot in the per-address count once
// authenticated, and, with a PSK, the nonces of its authentication.
type sessionGate struct {
	s       *Server
	cc      *control.Conn
	addr    netip.Addr
	log     *slog.Logger
	counted bool // holds a slot in the per-address count
	client  control.Nonce
	server  control.Nonce
}

// admitSession decides, after the client's hello, whether the session may
// go on: TLS when the server requires it, the per-address limit, and an
// authentication offer when the server has a PSK. It fills mine.Auth with
// the server's challenge. A refused client gets an error message saying
// why, and is logged with its address.
func (s *Server) admitSession(cc *control.Conn, mine *control.Hello, theirs control.Hello, log *slog.Logger) (*sessionGate, bool) {
	m := s.metrics()
	if s.cfg.Auth.TLS != nil {
		if _, ok := cc.NetConn().(*tls.Conn); !ok {
			m.authFailure("tls_required")
			s.refused(log, slog.LevelWarn, "tls_required", "control connection refused: no TLS")
			cc.SendError(control.CodeAuth, "this server accepts control connections only over TLS: run the client with --tls-ca FILE or --tls-fingerprint SHA256")
			return nil, false
		}
	}
	addr := addrOf(cc.NetConn().RemoteAddr())
	l := s.admission()
	s.safety.mu.Lock()
	if s.safety.conns == nil {
		s.safety.perAddr = map[netip.Prefix]int{}
		s.safety.conns = map[*control.Conn]struct{}{}
	}
	closing := s.safety.closing
	rateOK := closing || s.safety.handshakes.take(addrKey(addr), l.MaxHandshakeRate, time.Now())
	if !closing && rateOK {
		s.safety.conns[cc] = struct{}{}
	}
	s.safety.mu.Unlock()
	switch {
	case closing:
		cc.SendError(control.CodeBusy, "the server is shutting down; retry in a moment")
		return nil, false
	case !rateOK:
		m.connRefused(refusedHandshake)
		s.refused(log, slog.LevelWarn, refusedHandshake, "control connection refused", "rate", l.MaxHandshakeRate)
		cc.SendError(control.CodeLimit, fmt.Sprintf("%s started more than %g control connections a second (bursts of %g) before authenticating, this server's limit per address (serve --max-handshake-rate); retry in a moment",
			addrKeyString(addr), l.MaxHandshakeRate, 2*l.MaxHandshakeRate))
		return nil, false
	}
	m.sessionOpened()
	g := &sessionGate{s: s, cc: cc, addr: addr, log: log}
	if s.cfg.Auth.PSK == nil {
		// Without a key every client is as authenticated as it gets
		// once it said hello: it counts from now on.
		if !g.count() {
			g.release()
			return nil, false
		}
		return g, true
	}
	if err := control.CheckAuthHello(theirs.Auth); err != nil {
		reason, msg := "bad_offer", fmt.Sprintf("this server authenticates with %s: %v", control.AuthScheme, err)
		if theirs.Auth == nil {
			reason, msg = "no_key", "this server requires a pre-shared key: run the client with --psk-file FILE holding the server's key"
		}
		m.authFailure(reason)
		s.refused(log, slog.LevelWarn, reason, "authentication failed", "err", err)
		cc.SendError(control.CodeAuth, msg)
		g.release()
		return nil, false
	}
	g.client = theirs.Auth.Nonce
	g.server = control.NewNonce()
	mine.Auth = &control.AuthHello{Scheme: control.AuthScheme, Nonce: g.server}
	return g, true
}

// authenticate reads the client's proof, checks it in constant time and
// answers with the server's own proof, by the handshake's deadline.
// Without a PSK it only lifts the handshake's frame bound. It reports whether the session may go on.
func (g *sessionGate) authenticate(cc *control.Conn, version int, deadline time.Time) bool {
	s := g.s
	if key := s.cfg.Auth.PSK; key != nil {
		m := s.metrics()
		var p control.AuthProof
		if err := cc.Expect(control.TypeAuth, &p, time.Until(deadline)); err != nil {
			m.authFailure("no_proof")
			s.refused(g.log, slog.LevelWarn, "no_proof", "authentication failed", "err", err)
			if errors.Is(err, control.ErrProtocol) {
				cc.SendError(control.CodeAuth, "authentication failed: expected an auth message with the client's proof")
			}
			return false
		}
		if err := control.VerifyAuth(key, control.RoleClient, version, g.client, g.server, p); err != nil {
			m.authFailure("bad_proof")
			s.refused(g.log, slog.LevelWarn, "bad_proof", "authentication failed", "err", err)
			cc.SendError(control.CodeAuth, "authentication failed: the client's proof does not match this server's pre-shared key; check that both sides use the same --psk-file")
			return false
		}
		if !g.count() {
			return false
		}
		if err := cc.Send(control.TypeAuthOK, control.NewAuthProof(key, control.RoleServer, version, g.client, g.server)); err != nil {
			return false
		}
		g.log.Debug("client authenticated")
	}
	cc.SetMaxFrame(s.cfg.MaxFrame)
	return true
}

// count takes a slot in the per-address count for an authenticated
// session, or tells the client that its address holds the limit already.
func (g *sessionGate) count() bool {
	s := g.s
	limit := s.admission().MaxConnsPerAddr
	key := addrKey(g.addr)
	s.safety.mu.Lock()
	n := s.safety.perAddr[key]
	if n < limit {
		s.safety.perAddr[key] = n + 1
		g.counted = true
	}
	s.safety.mu.Unlock()
	if !g.counted {
		s.metrics().connRefused(refusedConnsPerAdr)
		s.refused(g.log, slog.LevelWarn, refusedConnsPerAdr, "control connection refused", "open", n)
		g.cc.SendError(control.CodeLimit, fmt.Sprintf("%s already has %d control connections open to this server, its limit per address (serve --max-conns-per-addr); close the others or retry later", addrKeyString(g.addr), n))
		return false
	}
	return true
}

// release frees the session's slot in the per-address count.
func (g *sessionGate) release() {
	s := g.s
	s.safety.mu.Lock()
	if g.counted {
		key := addrKey(g.addr)
		if n := s.safety.perAddr[key]; n <= 1 {
			delete(s.safety.perAddr, key)
		} else {
			s.safety.perAddr[key] = n - 1
		}
		g.counted = false
	}
	delete(s.safety.conns, g.cc)
	s.safety.mu.Unlock()
	s.metrics().sessionClosed()
}

// sessions returns the number of admitted control sessions.
func (s *Server) sessions() int {
	s.safety.mu.Lock()
	defer s.safety.mu.Unlock()
	return len(s.safety.conns)
}

// closeSessions closes every admitted control connection and refuses new
// ones: the last step of a shutdown whose sessions did not end by
// themselves.
func (s *Server) closeSessions() {
	s.safety.mu.Lock()
	defer s.safety.mu.Unlock()
	s.safety.closing = true
	for cc := range s.safety.conns {
		cc.Close()
	}
}

// addrKey is what the per-address limits count by: the address itself
// for IPv4, its /64 for IPv6, the smallest prefix a site is usually given
// (one host may use any address in it).
func addrKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}

// addrKeyString names an address's key for a message: the address for
// IPv4, the /64 for IPv6.
func addrKeyString(a netip.Addr) string {
	k := addrKey(a)
	if k.IsSingleIP() {
		return k.Addr().String()
	}
	return k.String()
}

// handshakeRate is a token bucket per address key: each unauthenticated
// control connection takes a token; tokens come back at the rate, up to
// twice the rate. Its zero value is ready to use; the caller holds
// safety.mu.
type handshakeRate struct {
	buckets map[netip.Prefix]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxBuckets bounds the addresses the rate limit remembers. Buckets that
// refilled are forgotten when the map is full; if none has, a connection
// from yet another address is refused as over the rate until some do.
const maxBuckets = 16384

func (h *handshakeRate) take(key netip.Prefix, rate float64, now time.Time) bool {
	if math.IsInf(rate, 1) {
		return true
	}
	burst := max(2*rate, 1)
	if h.buckets == nil {
		h.buckets = map[netip.Prefix]*bucket{}
	}
	b := h.buckets[key]
	if b == nil {
		if len(h.buckets) >= maxBuckets {
			for k, ob := range h.buckets {
				if ob.tokens+now.Sub(ob.last).Seconds()*rate >= burst {
					delete(h.buckets, k)
				}
			}
			if len(h.buckets) >= maxBuckets {
				return false
			}
		}
		b = &bucket{tokens: burst, last: now}
		h.buckets[key] = b
	}
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
