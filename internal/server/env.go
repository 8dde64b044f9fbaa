package server

import (
	"context"
	"golang.org/x/time/rate"
	"log/slog"
	"net/netip"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/measure"
	"wirespeed/internal/sysinfo"
)

// envTimeout bounds collecting the environment record.
const envTimeout = 5 * time.Second

// hostSession is what a control session keeps about the server's host
// between its tests: the environment record it sends with every result
// (collected once per session and again after a change), whether the
// session may change devices, and the devices it changed (netconf.go),
// which it restores when it ends.
//
// The session's goroutine is the only one that uses it.
type hostSession struct {
	srv  *Server
	peer netip.Addr // the client's address: the record describes the route to it
	log  *slog.Logger

	// authenticated is set when the client proved it holds the server's
	// pre-shared key (--psk-file; admission.go's sessionGate.authenticate).
	// Remote device changes need it as well as --allow-netconf. TLS alone
	// does not authenticate a client.
	authenticated bool

	env       *sysinfo.Env
	collected time.Time // when env was collected
	gen       uint64    // the server's netconfGen when env was collected
	// envLimiter bounds the collections env requests cause (refresh).
	envLimiter *rate.Limiter
	// baselineDone is closed once the session's idle CPU baseline,
	// started as the session opens (idleBaseline), was taken; baseline
	// is what it measured (nil when it could not) and baselineErr why
	// not. stopBaseline cancels it.
	baselineDone chan struct{}
	stopBaseline context.CancelFunc
	baseline     *measure.CPUBaseline
	baselineErr  error
	// devs are the devices this session changed, by name.
	devs map[string]*heldDev
}

type hostSessionKey struct{}

// startHostSession makes the session's hostSession and returns ctx
// carrying it (test reads it there) and the function that ends it: it
// restores every device the session changed and did not keep. Call it
// once the session is established, after its authentication succeeded:
// with a pre-shared key, that success is what marks the session
// authenticated. Defer the end.
func (s *Server) startHostSession(ctx context.Context, cc *control.Conn, log *slog.Logger) (context.Context, func()) {
	hs := &hostSession{srv: s, peer: addrOf(cc.NetConn().RemoteAddr()), log: log, devs: map[string]*heldDev{}}
	hs.authenticated = s.cfg.Auth.PSK != nil || s.nc.authenticateAll
	return context.WithValue(ctx, hostSessionKey{}, hs), func() {
		hs.endBaseline()
		hs.end()
	}
}

// hostSessionOf returns the session's hostSession, nil outside a session.
func hostSessionOf(ctx context.Context) *hostSession {
	hs, _ := ctx.Value(hostSessionKey{}).(*hostSession)
	return hs
}

// record returns the server's environment record for the route to the
// client, collecting it when the session has none yet.
func (hs *hostSession) record(ctx context.Context) *sysinfo.Env {
	if hs.env == nil {
		hs.awaitBaseline()
		env := hs.srv.collectEnv(ctx, hs.peer)
		if hs.baselineErr != nil {
			env.Warnings = append(env.Warnings, "idle cpu baseline: "+hs.baselineErr.Error())
		}
		env.CPUBaseline = hs.baseline
		hs.env = &env
		hs.collected = time.Now()
		hs.gen = hs.srv.netconfGen.Load()
	}
	return hs.env
}

// takeBaseline is sysinfo.TakeBaseline; a test counts its calls.
var takeBaseline = sysinfo.TakeBaseline

// idleBaseline starts the server's idle CPU baseline, once per session,
// as the session opens, while the client takes its own (client.Dial) and
// no test runs. It runs beside the session: a test waits for it before
// it starts (awaitBaseline, and the record carries it), but a relay does
// not, so a session that only relays (a mesh's runner asking this server
// to measure a pair) does not wait for a baseline no result of it
// carries: the relay's own client takes the one its result has.
func (hs *hostSession) idleBaseline(ctx context.Context) {
	if hs == nil || hs.baselineDone != nil {
		return
	}
	done := make(chan struct{})
	ctx, hs.stopBaseline = context.WithCancel(ctx)
	hs.baselineDone = done
	go func() {
		defer close(done)
		hs.baseline, hs.baselineErr = takeBaseline(ctx, hs.srv.cfg.ProcRoot, sysinfo.BaselineWindow)
	}()
}

// awaitBaseline waits until the session's idle baseline was taken (at
// most its window), if one was started.
func (hs *hostSession) awaitBaseline() {
	if hs != nil && hs.baselineDone != nil {
		<-hs.baselineDone
	}
}

// endBaseline cancels the baseline if it still runs and waits for it, as
// the session ends.
func (hs *hostSession) endBaseline() {
	if hs.stopBaseline != nil {
		hs.stopBaseline()
		<-hs.baselineDone
	}
}

// forget drops the record: the next result carries a fresh one. A
// netconf change calls it, and counts itself in the server's
// netconfGen, so that every session's record after it shows the change
// however soon the next test starts (a matrix's rows follow each other
// within a second, and its netconf session is not its tests' session);
// netconf requests are bounded by their own cost and the device locks,
// not by envMinAge.
func (hs *hostSession) forget() {
	hs.srv.netconfGen.Add(1)
	hs.env = nil
}

// refresh forgets the record when an env request asks for a new one.
//
// Collecting one costs a few milliseconds of CPU (netlink, ethtool,
// /proc), and a client asking for it in a loop once made the server
// collect 5,658 records in 20 s, 11.6 CPU-s. So a session's requests
// draw on a token bucket (envLimiter): envBurst at once, then one every
// envMinAge; a request without a token gets the record the session has.
// The burst is for a matrix, whose rows change devices by means the
// server does not see (a lab's namespaces, the user's ethtool) and ask
// for a fresh record after each change; a change through netconf is
// seen anyway (netconfGen). The sessions an address may hold
// (--max-conns-per-addr) and start (--max-handshake-rate) bound the rest.
func (hs *hostSession) refresh() {
	if hs.envLimiter == nil {
		hs.envLimiter = rate.NewLimiter(rate.Every(envMinAge), envBurst)
	}
	if hs.envLimiter.Allow() || hs.gen != hs.srv.netconfGen.Load() {
		hs.env = nil
	}
}

// envMinAge is the time a session's env requests earn one collection
// in, past the first envBurst.
const (
	envMinAge = time.Second
	envBurst  = 8
)

// collectHost is sysinfo.Collect; a test counts its calls.
var collectHost = sysinfo.Collect

func (s *Server) collectEnv(ctx context.Context, peer netip.Addr) sysinfo.Env {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), envTimeout)
	defer cancel()
	env, warnings, err := collectHost(ctx, sysinfo.Options{ProcRoot: s.cfg.ProcRoot, Peer: peer})
	if err != nil {
		warnings = append(warnings, err.Error())
	}
	env.Warnings = warnings
	if env.Hostname == "" {
		env.Hostname = s.cfg.Hostname
	}
	return env
}

// sideEnv is the record to send with a side result of the session in
// ctx; nil outside a session.
func sideEnv(ctx context.Context) *sysinfo.Env {
	hs := hostSessionOf(ctx)
	if hs == nil {
		return nil
	}
	return hs.record(ctx)
}

// hostRequest answers an env or netconf message between tests. An error
// ends the session (the connection failed); a refused or failed request
// is answered with an error message and the session goes on.
func (s *Server) hostRequest(ctx context.Context, cc *control.Conn, m control.Message) error {
	hs := hostSessionOf(ctx)
	if hs == nil {
		return cc.SendError(control.CodeInternal, "no session state")
	}
	switch m.Type {
	case control.TypeEnv:
		hs.refresh()
		return cc.Send(control.TypeEnv, control.EnvReply{Env: *hs.record(ctx)})
	case control.TypeNetconf:
		var req control.NetconfRequest
		if err := m.Decode(&req); err != nil {
			return cc.SendError(control.CodeProtocol, err.Error())
		}
		reply, code, err := hs.netconf(ctx, req)
		if err != nil {
			return cc.SendError(code, err.Error())
		}
		return cc.Send(control.TypeNetconfDone, reply)
	}
	return cc.SendError(control.CodeProtocol, "unexpected "+m.Type)
}

// wireDevice is the device whose counters a test reads: the interface of
// the environment record, "" when there is none.
func wireDevice(env *sysinfo.Env) string {
	if env == nil || env.Interface == nil {
		return ""
	}
	return env.Interface.Name
}
