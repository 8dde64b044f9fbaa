package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// Third-party tests: a client asks this server (A) to run a test against
// another server (B) with A as B's client, and gets the joined result
// back (docs/protocol.md, "Relay"). It is the one case where the server
// opens connections and sends data to an address other than its control
// connection's peer, so it is off unless Relay.Allow is set, only toward
// Relay.Peers, and only for a client that proved the pre-shared key
// (docs/security.md, "Third-party tests").

// RelayConfig is the part of Config for third-party tests.
type RelayConfig struct {
	// Allow turns relaying on (serve --allow-relay). It needs Auth.PSK:
	// a session that did not prove the key is refused a relay.
	Allow bool
	// Peers are the servers a relay may be toward (serve --relay-peers).
	Peers RelayPeers
	// PSK is the key this server proves to the peer; nil means
	// Auth.PSK, the same key its own clients prove (one fleet, one
	// key). A peer without a key is refused: a relaying server always
	// authenticates its peer.
	PSK []byte
	// Resolver looks up host names of Peers and of requests; nil means
	// net.DefaultResolver.
	Resolver Resolver
}

// Resolver looks up a host's addresses, as net.Resolver.LookupNetIP does.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// RelayPeers is a list of the peers a relay may be toward: addresses,
// CIDR prefixes, and host names whose current addresses are allowed (a
// Kubernetes headless service's name allows every pod behind it).
type RelayPeers struct {
	prefixes []netip.Prefix
	hosts    []string
}

var hostNameRe = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62}))*\.?$`)

// ParseRelayPeers parses --relay-peers entries: an IP address, a CIDR
// prefix (10.0.0.0/8, fd00::/8) or a host name. Commas inside an entry
// separate more entries.
func ParseRelayPeers(entries []string) (RelayPeers, error) {
	var p RelayPeers
	for _, e := range entries {
		for _, s := range strings.Split(e, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			if pf, err := netip.ParsePrefix(s); err == nil {
				p.prefixes = append(p.prefixes, pf.Masked())
				continue
			}
			if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
				a = a.Unmap()
				p.prefixes = append(p.prefixes, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			if len(s) > 253 || !hostNameRe.MatchString(s) {
				return RelayPeers{}, fmt.Errorf("relay peer %q is neither an address, a CIDR prefix (10.0.0.0/8) nor a host name", s)
			}
			p.hosts = append(p.hosts, strings.ToLower(strings.TrimSuffix(s, ".")))
		}
	}
	return p, nil
}

// Empty reports whether the list allows no peer at all.
func (p RelayPeers) Empty() bool { return len(p.prefixes) == 0 && len(p.hosts) == 0 }

func (p RelayPeers) String() string {
	var s []string
	for _, pf := range p.prefixes {
		if pf.IsSingleIP() {
			s = append(s, pf.Addr().String())
		} else {
			s = append(s, pf.String())
		}
	}
	return strings.Join(append(s, p.hosts...), ",")
}

// allows reports whether a is an allowed peer address: inside one of the
// prefixes, or one of the current addresses of a listed host name.
func (p RelayPeers) allows(ctx context.Context, r Resolver, a netip.Addr) bool {
	for _, pf := range p.prefixes {
		if pf.Contains(a) {
			return true
		}
	}
	for _, h := range p.hosts {
		addrs, err := r.LookupNetIP(ctx, "ip", h)
		if err != nil {
			continue
		}
		for _, x := range addrs {
			if x.Unmap() == a {
				return true
			}
		}
	}
	return false
}

// errPeerNotAllowed is a relay toward a peer outside --relay-peers.
var errPeerNotAllowed = errors.New("peer not allowed")

// unreachable is what the requester is told about a peer the relay could
// not reach: one sentence, the same whether the name did not resolve, the
// port was closed, something other than a wirespeed server answered or
// nothing did, so that a relay tells nothing about the server's network
// (which ports are open, what runs on them, which DNS resolver it uses).
// The log has the cause.
func unreachable(peer string) string {
	return fmt.Sprintf("relay to %s: the peer could not be reached as a wirespeed server", peer)
}

// answerUnreachable tells the requester its peer could not be reached,
// unreachableAfter from when it asked whatever way the attempt failed:
// the time of the answer told a closed port (0.2 s) from a silent one
// (5.2 s) and from another service (0.2 s). The session's end
// cuts the wait short.
func (s *Server) answerUnreachable(ctx context.Context, cc *control.Conn, asked time.Time, code, peer string) error {
	tm := time.NewTimer(time.Until(asked.Add(s.unreachableAfter())))
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
	return cc.SendError(code, unreachable(peer))
}

// unreachableAfter is the longest a relay may take to find that its peer
// is not a wirespeed server it can reach: the connect and the handshake,
// each bounded by the handshake timeout, and a second for the name.
func (s *Server) unreachableAfter() time.Duration {
	return 2*s.cfg.HandshakeTimeout + time.Second
}

// relayTarget resolves the requested peer once and returns the address
// to dial: the first of its addresses that the list allows, of the
// spec's IP version. The relay dials that address, never the name again,
// so a name cannot resolve to an allowed address for the check and to
// another for the connection.
func (s *Server) relayTarget(ctx context.Context, peer string, ipVersion int) (netip.AddrPort, error) {
	host, ps, err := net.SplitHostPort(peer)
	if err != nil {
		return netip.AddrPort{}, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return netip.AddrPort{}, err
	}
	r := s.cfg.Relay.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		network := spec.LookupNetwork(ipVersion)
		lctx, cancel := context.WithTimeout(ctx, s.cfg.HandshakeTimeout)
		addrs, err = r.LookupNetIP(lctx, network, host)
		cancel()
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("%w: look up %s: %v", control.ErrRelayFailed, host, err)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, s.cfg.HandshakeTimeout)
	defer cancel()
	var seen []string
	for _, a := range addrs {
		a = a.Unmap()
		switch {
		case ipVersion == 4 && !a.Is4(), ipVersion == 6 && !a.Is6():
			continue
		case !a.IsValid(), a.IsUnspecified(), a.IsMulticast(), a == netip.IPv4Unspecified(), a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
			seen = append(seen, a.String())
			continue
		}
		if s.cfg.Relay.Peers.allows(lctx, r, a) {
			return netip.AddrPortFrom(a, uint16(port)), nil
		}
		seen = append(seen, a.String())
	}
	if len(seen) == 0 {
		return netip.AddrPort{}, fmt.Errorf("%w: %s has no IPv%d address", control.ErrRelayFailed, host, ipVersion)
	}
	return netip.AddrPort{}, fmt.Errorf("%w: %s (%s) is not among this server's relay peers (serve --relay-peers %s)",
		errPeerNotAllowed, peer, strings.Join(seen, ", "), s.cfg.Relay.Peers)
}

// Reasons a relay is refused, as logged and counted.
const (
	relayNotAllowed      = "relay_not_allowed"
	relayPeerNotAllowed  = "relay_peer_not_allowed"
	relayUnauthenticated = "relay_unauthenticated"
)

// relay serves one relay message of a session. It answers the client
// with relay_result or an error and returns nil while the session may go
// on; an error ends the session (the control connection failed).
// A relay takes the session's test slot, as a test does, since it loads
// this host's network as much.
func (ss *session) relay(ctx context.Context, m control.Message) error {
	s, cc, log := ss.s, ss.cc, ss.log
	asked := time.Now()
	req, err := control.DecodeRelayRequest(m)
	switch {
	case errors.Is(err, control.ErrInvalid):
		s.countRefused(refusedInvalid)
		cc.SendError(control.CodeInvalid, err.Error())
		return nil
	case err != nil:
		cc.SendError(control.CodeProtocol, err.Error())
		return err
	}
	t := req.Spec
	log = log.With("relay_to", req.Peer)
	refuse := func(reason, code, msg string) error {
		s.metrics().relayRefused(reason)
		log.Warn("relay refused", "test", t.Kind, "reason", reason)
		return cc.SendError(code, msg)
	}
	switch {
	case !s.cfg.Relay.Allow:
		return refuse(relayNotAllowed, control.CodeRelayRefused,
			"this server does not run third-party tests: start it with --allow-relay and --relay-peers, or test against its peer directly")
	case s.cfg.Auth.PSK == nil:
		// Never reached from `wirespeed serve`, which refuses
		// --allow-relay without --psk-file: a relay for anyone who can
		// reach the port would make this server an open traffic source.
		return refuse(relayUnauthenticated, control.CodeAuth,
			"a third-party test needs an authenticated session, and this server has no pre-shared key: start it with --psk-file")
	case t.Payload.Kind == spec.PayloadFile:
		s.countRefused(refusedInvalid)
		return cc.SendError(control.CodeInvalid, "a relayed test cannot send a --payload file (this server has no copy): use random or zeros")
	case t.BindAddr != "" || t.BindDev != "" || t.ClientPort != 0:
		// Socket options: the client's own sockets; this
		// server binds where it likes.
		s.countRefused(refusedInvalid)
		return cc.SendError(control.CodeInvalid, "a relayed test cannot choose this server's local address, device or ports (-B, --bind-dev, --cport): they apply to the client's own sockets")
	}
	if s.refuseTest(cc, t, 0, false, log) {
		return nil
	}
	if reason, msg := s.relayLimit(t); reason != "" {
		s.countRefused(reason)
		log.Info("relay refused", "test", t.Kind, "reason", reason, "limit", msg)
		return cc.SendError(control.CodeLimit, msg)
	}
	target, err := s.relayTarget(ctx, req.Peer, t.IPVersion)
	switch {
	case errors.Is(err, errPeerNotAllowed):
		return refuse(relayPeerNotAllowed, control.CodeRelayRefused, err.Error())
	case err != nil:
		s.metrics().relayDone("failed")
		log.Info("relay failed", "test", t.Kind, "err", err)
		return s.answerUnreachable(ctx, cc, asked, control.CodeRelayFailed, req.Peer)
	}
	if !ss.admit("relay") {
		return nil
	}
	// As the peer's client, this server allocates about what a server
	// of the same test would.
	release, ok := ss.reserve(t, 0, false)
	if !ok {
		return nil
	}
	defer release()
	return ss.observeTest(ctx, t, func(ctx context.Context) error {
		// The relay's connect and handshake with the peer come on top of
		// the test's own time.
		ss.recvTimeout.Store(int64(t.Omit + t.Duration + testGrace + 2*s.cfg.HandshakeTimeout))
		return s.runRelay(ctx, cc, ss.msgs, req, target, log)
	})
}

// relayLimit applies the limit on what this server sends to a relayed
// test where it is the sender: as B's client it sends UDP_STREAM unless
// reversed. (refuseTest checks the other limits, and UDP where B sends.)
func (s *Server) relayLimit(t spec.Test) (reason, msg string) {
	if t.Kind != spec.UDPStream || t.Reverse {
		return "", ""
	}
	l := s.admission()
	rate := math.Inf(1)
	if t.RateBitsPerSecond > 0 {
		rate = t.RateBitsPerSecond * float64(t.Parallel)
	}
	if rate <= l.MaxUDPRateBitsPerSecond {
		return "", ""
	}
	if math.IsInf(rate, 1) {
		return refusedUDPRate, fmt.Sprintf("a relayed UDP test where this server sends as fast as it can (no -b) is over its limit of %s (serve --max-udp-rate); ask for a rate with -b",
			units.FormatBits(l.MaxUDPRateBitsPerSecond))
	}
	return refusedUDPRate, fmt.Sprintf("a relayed UDP rate of %s from this server (-b times -P) is over its limit of %s (serve --max-udp-rate); ask for less with -b",
		units.FormatBits(rate), units.FormatBits(l.MaxUDPRateBitsPerSecond))
}

// runRelay runs the relayed test against target as its client and sends
// the result. It returns an error only when the requester's control
// connection failed; the peer's failures are answered and logged.
func (s *Server) runRelay(ctx context.Context, cc *control.Conn, msgs <-chan recvd, req control.RelayRequest, target netip.AddrPort, log *slog.Logger) error {
	rec, _ := ctx.Value(recordKey{}).(*testRecord)
	if rec != nil {
		rec.logged = true // the lines below are the relay's one line
	}
	started := time.Now()
	t := req.Spec
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Watch the requester while the relay runs: an abort stops the test
	// against the peer (whose result is still sent); a lost or confused
	// control connection stops it too and ends the session.
	stopWatch := watchControl(msgs, cancel, "the relay")

	key := s.cfg.Relay.PSK
	if key == nil {
		key = s.cfg.Auth.PSK
	}
	cfg := client.Config{
		Addr:             target.String(),
		IPVersion:        t.IPVersion,
		Tool:             s.cfg.Tool,
		Hostname:         s.cfg.Hostname,
		Logger:           log,
		HandshakeTimeout: s.cfg.HandshakeTimeout,
		ProcRoot:         s.cfg.ProcRoot,
		// The UDP requests this server sends to its peer keep to its
		// UDP limit, as its own responses do.
		MaxUDPRRRate: s.admission().MaxUDPRateBitsPerSecond,
	}
	cfg.PSK = key
	reached := false
	res, runErr := func() (result.Result, error) {
		c, err := client.Dial(runCtx, cfg)
		if err != nil {
			return result.Result{}, err
		}
		reached = true
		defer c.Close()
		return c.Run(runCtx, t)
	}()
	abortErr := stopWatch()
	d := time.Since(started).Round(time.Millisecond)
	if abortErr != nil {
		s.metrics().relayDone("failed")
		log.Info("relay failed", "test", t.Kind, "duration", d, "reason", "control_lost", "err", abortErr)
		return abortErr
	}
	if runErr != nil && len(res.Directions) == 0 {
		s.metrics().relayDone("failed")
		log.Info("relay failed", "test", t.Kind, "duration", d, "err", runErr)
		code := control.CodeRelayFailed
		var re *control.RemoteError
		isRemote := errors.As(runErr, &re)
		if isRemote && re.Code != control.CodeProtocol && re.Code != control.CodeInternal {
			code = re.Code // the peer's refusal: busy, limit, auth, ...
		}
		if !reached && !isRemote {
			// No wirespeed server answered: say only that, and when
			// the slowest way of failing would have.
			return s.answerUnreachable(ctx, cc, started, code, req.Peer)
		}
		return cc.SendError(code, fmt.Sprintf("relay to %s: %v", req.Peer, runErr))
	}
	if runErr != nil {
		res.Warnings = append(res.Warnings, result.Words("relay: "+runErr.Error()))
	}
	res.Remote.Address = req.Peer
	result := "ok"
	if res.Interrupted || runErr != nil {
		result = "interrupted"
	}
	s.metrics().relayDone(result)
	if result == "ok" {
		src, dst := pairLabels(req, s.cfg.Hostname)
		s.metrics().pairMeasured(src, dst, res, time.Now())
	}
	log.Info("relay done", "test", t.Kind, "duration", d, "throughput_bps", math.Round(res.Summary.BitsPerSecond), "result", result)
	return cc.Send(control.TypeRelayResult, s.fitRelayResult(cc, res))
}

// fitRelayResult keeps the result within the control connection's frame
// bound: a long test with many streams has many per-stream interval
// samples; they are the first thing left out, with a warning.
func (s *Server) fitRelayResult(cc *control.Conn, res result.Result) control.RelayResult {
	rr := control.RelayResult{Result: res}
	b, err := json.Marshal(rr)
	if err != nil || len(b) < cc.MaxFrame()-1024 {
		return rr
	}
	strip := func(ss []result.Stream) []result.Stream {
		out := slices.Clone(ss)
		for i := range out {
			out[i].Sender.Intervals, out[i].Receiver.Intervals = nil, nil
		}
		return out
	}
	res.Streams = strip(res.Streams)
	res.Directions = slices.Clone(res.Directions)
	for i := range res.Directions {
		res.Directions[i].Streams = strip(res.Directions[i].Streams)
	}
	res.Warnings = append(res.Warnings, result.Words(fmt.Sprintf("per-stream intervals left out: the result was over the relay's frame bound of %d bytes (serve --max-frame)", cc.MaxFrame())))
	return control.RelayResult{Result: res}
}

// pairLabels are the source and destination labels of a relayed pair:
// the requester's names for the two servers, or this server's hostname
// and the peer as asked.
func pairLabels(req control.RelayRequest, hostname string) (source, destination string) {
	source, destination = req.Source, req.Destination
	if source == "" {
		source = hostname
	}
	if destination == "" {
		destination = req.Peer
	}
	return source, destination
}
