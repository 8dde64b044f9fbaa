package exporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// maxProbeLog bounds the log a probe keeps for debug=true and /logs.
const maxProbeLog = 64 << 10

// maxResultJSON bounds the results document a probe keeps for /result.
const maxResultJSON = 1 << 20

// probeRecord is what the exporter keeps of a recent probe.
type probeRecord struct {
	ID       uint64
	Module   string
	Target   string
	Start    time.Time
	Duration time.Duration
	Success  bool
	Reason   string // the failure's reason label, "" on success
	Message  string // what went wrong, in words
	Log      string
	Result   []byte // the results document's JSON; nil when no test ran
	// ResultStarted is the result's start (result.Result.Started), the
	// value of wirespeed_probe_started_timestamp_seconds.
	ResultStarted time.Time
}

// probeFailure is why a probe answers probe_success 0.
type probeFailure struct {
	reason string
	err    error
	// atDeadline holds the answer until the probe's deadline, so that
	// its time tells nothing either (a target not reached).
	atDeadline bool
	// badRequest answers HTTP 400 with the message instead of
	// probe_success 0, as blackbox_exporter answers an unknown module
	// or a missing target: a mistake in the scrape's configuration
	// shows as a failed scrape (up 0), not as a target down.
	badRequest bool
}

func fail(reason string, format string, a ...any) *probeFailure {
	return &probeFailure{reason: reason, err: fmt.Errorf(format, a...)}
}

// serveProbe answers /probe?target=HOST[:PORT]&module=NAME[&debug=true].
// As blackbox_exporter does, it answers 400 to a request no probe can be
// made of (a module not in the configuration, no target): the scrape's
// configuration is wrong. Any other failure is a 200 with probe_success
// 0, so that it is a stored 0 rather than a gap; debug=true answers the
// probe's log, the metrics and the module's configuration as text
// instead.
func (x *Exporter) serveProbe(w http.ResponseWriter, r *http.Request) {
	start := x.opts.Now()
	q := r.URL.Query()
	// What the client sent is kept and shown clipped: the recent probes
	// must not hold a megabyte of query string each.
	rec := &probeRecord{ID: x.nextID.Add(1), Module: clip(q.Get("module")), Target: clip(q.Get("target")), Start: start}
	logBuf := &limitWriter{n: maxProbeLog}
	plog := slog.New(slog.NewTextHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	plog.Info("probe", "id", rec.ID, "module", rec.Module, "target", rec.Target)

	reg := prometheus.NewRegistry()
	success := prometheus.NewGauge(prometheus.GaugeOpts{Name: "probe_success", Help: "1 when the probe's test ran and gave a result, 0 when it did not (the reason is in the debug log)."})
	duration := prometheus.NewGauge(prometheus.GaugeOpts{Name: "probe_duration_seconds", Help: "Time the probe took, from request to answer, queueing included."})
	ipProtocol := prometheus.NewGauge(prometheus.GaugeOpts{Name: "probe_ip_protocol", Help: "The IP version of the address probed, 4 or 6; 0 when no address was chosen."})
	reg.MustRegister(success, duration, ipProtocol)

	timeout := x.timeout(r, plog)
	ctx, cancel := context.WithDeadline(r.Context(), start.Add(timeout))
	defer cancel()
	res, perr := x.probe(ctx, rec, q.Get("target"), ipProtocol, plog, logBuf)
	if perr != nil && perr.atDeadline {
		<-ctx.Done()
	}
	if perr == nil {
		success.Set(1)
		reg.MustRegister(resultCollector{res})
		rec.Success = true
	} else {
		rec.Reason, rec.Message = perr.reason, perr.err.Error()
		plog.Error("probe failed", "reason", perr.reason, "err", perr.err)
		x.metrics.failures.WithLabelValues(perr.reason).Inc()
	}
	var doc *result.Document
	if perr == nil || perr.reason == reasonTest {
		if res != nil {
			doc = &result.Document{Schema: result.Schema, Tool: x.opts.Tool, Command: "exporter", Result: *res}
			var b bytes.Buffer
			if err := report.JSON(&b, *doc); err == nil && b.Len() <= maxResultJSON {
				rec.Result = b.Bytes()
				rec.ResultStarted = res.Started
			}
		}
	}
	rec.Duration = x.opts.Now().Sub(start)
	duration.Set(rec.Duration.Seconds())
	plog.Info("probe done", "success", rec.Success, "duration_seconds", rec.Duration.Seconds())
	rec.Log = logBuf.seal()

	module := ""
	if _, known := x.Config().Modules[rec.Module]; known {
		module = rec.Module
	}
	outcome := "success"
	if !rec.Success {
		outcome = "failure"
	}
	x.metrics.probes.WithLabelValues(module, outcome).Inc()
	x.metrics.duration.WithLabelValues(module).Observe(rec.Duration.Seconds())
	x.remember(rec)
	x.log.Debug("probe", "id", rec.ID, "module", rec.Module, "target", rec.Target, "success", rec.Success, "reason", rec.Reason, "err", rec.Message)

	if doc != nil && x.opts.Keep != nil {
		// The answer goes first: the archive may be slow or away (then
		// Keep spools the document), and Prometheus is waiting.
		defer func() {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			if err := x.opts.Keep(context.WithoutCancel(r.Context()), *doc); err != nil {
				x.log.Error("probe's result not archived", "id", rec.ID, "err", err)
			}
		}()
	}
	if perr != nil && perr.badRequest {
		http.Error(w, perr.err.Error(), http.StatusBadRequest)
		return
	}
	if q.Get("debug") == "true" {
		// blackbox_exporter's three sections, in its order and words.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Logs for the probe:\n%s\n\n\nMetrics that would have been returned:\n", rec.Log)
		mfs, err := reg.Gather()
		if err != nil {
			fmt.Fprintf(w, "gathering: %v\n", err)
		}
		for _, mf := range mfs {
			expfmt.MetricFamilyToText(w, mf)
		}
		fmt.Fprintf(w, "\n\n\nModule configuration:\n")
		if m, ok := x.Config().Modules[rec.Module]; ok {
			w.Write(m.YAML())
		}
		return
	}
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// timeout is the time the probe may take: the scrape's timeout from
// Prometheus's header (or the default without one), at most MaxTimeout,
// less the offset.
func (x *Exporter) timeout(r *http.Request, log *slog.Logger) time.Duration {
	t := x.opts.DefaultTimeout
	if h := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"); h != "" {
		s, err := strconv.ParseFloat(h, 64)
		switch {
		case err != nil || !(s > 0):
			log.Warn("ignoring a bad X-Prometheus-Scrape-Timeout-Seconds", "value", clip(h), "default_seconds", t.Seconds())
		case s > x.opts.MaxTimeout.Seconds():
			t = x.opts.MaxTimeout
			log.Warn("X-Prometheus-Scrape-Timeout-Seconds over the exporter's longest; taking that", "value", clip(h), "max_seconds", t.Seconds())
		default:
			t = time.Duration(s * float64(time.Second))
		}
	}
	return t - x.opts.TimeoutOffset
}

// probe checks the request, waits for the target's turn, fits the test
// into what is left of the timeout and runs it. A failed test may still
// return its partial result.
func (x *Exporter) probe(ctx context.Context, rec *probeRecord, target string, ipProtocol prometheus.Gauge, log *slog.Logger, logBuf *limitWriter) (*result.Result, *probeFailure) {
	deadline, _ := ctx.Deadline()
	m, ok := x.Config().Modules[rec.Module] // a clipped name is no module's: names have at most 64 characters
	if !ok {
		f := fail(reasonUnknownModule, "unknown module %q: the configuration has %s", clip(rec.Module), strings.Join(x.Config().Names(), ", "))
		if rec.Module == "" {
			f = fail(reasonUnknownModule, "no module: add module=NAME, one of %s", strings.Join(x.Config().Names(), ", "))
		}
		f.badRequest = true
		return nil, f
	}
	if target == "" {
		f := fail(reasonBadTarget, "target parameter is missing: add target=HOST or target=HOST:PORT")
		f.badRequest = true
		return nil, f
	}
	host, port, err := ParseTarget(target, m.Plan.Port)
	if err != nil {
		return nil, fail(reasonBadTarget, "%v", err)
	}
	t := m.Plan.Test
	addr, perr := x.resolve(ctx, host, t.IPVersion, log)
	if perr != nil {
		return nil, perr
	}
	dial := netip.AddrPortFrom(addr, uint16(port)).String()
	if addr.Is4() {
		ipProtocol.Set(4)
	} else {
		ipProtocol.Set(6)
	}
	log.Info("target", "address", dial)

	need := t.Omit + t.Duration
	if x.opts.MaxLength > 0 && need > x.opts.MaxLength {
		if m.Plan.LengthSet || x.opts.MaxLength-t.Omit < MinFittedLength {
			return nil, fail(reasonTooLong, "module %q runs %s, more than the exporter's --max-length %v: shorten the module's length or raise --max-length",
				m.Name, testLength(t.Omit, t.Duration), x.opts.MaxLength)
		}
		t.Duration = x.opts.MaxLength - t.Omit
		log.Info("length fitted to --max-length", "length", t.Duration)
	}

	// A test that cannot fit even now is refused before it waits in line.
	if perr := x.fits(m, t, time.Until(deadline)-x.opts.Setup, 0); perr != nil {
		return nil, perr
	}

	// It waits in line no later than the last moment its test could
	// still start.
	shortest := t.Omit + MinFittedLength
	if m.Plan.LengthSet {
		shortest = t.Omit + t.Duration
	}
	waitCtx, cancel := context.WithDeadline(ctx, deadline.Add(-x.opts.Setup-shortest))
	defer cancel()
	waitStart := time.Now()
	turn, err := x.queues.acquire(waitCtx, dial)
	if err != nil {
		if full, ok := errors.AsType[errQueueFull](err); ok {
			if full.all {
				return nil, fail(reasonQueueFull, "%d probes already wait over all targets (the exporter's limit, --max-waiting %d): scrape less often, with fewer modules, or raise --max-concurrent or --max-waiting",
					full.waiting, x.opts.MaxWaiting)
			}
			return nil, fail(reasonQueueFull, "target %s already has %d probes in line (--queue-size %d): its server runs one test at a time; scrape it less often or with fewer modules",
				dial, full.waiting, x.opts.QueueSize)
		}
		return nil, fail(reasonQueueTimeout, "waited %v for target %s's turn (or a slot among --max-concurrent %d), until the scrape's timeout left no room for the test: scrape it less often, with fewer modules, or raise --max-concurrent",
			time.Since(waitStart).Round(time.Millisecond), dial, x.opts.MaxConcurrent)
	}
	if w := time.Since(waitStart); w > 10*time.Millisecond {
		log.Info("waited in line", "seconds", w.Seconds())
	}

	left := time.Until(deadline) - x.opts.Setup
	if perr := x.fits(m, t, left, time.Since(waitStart)); perr != nil {
		turn.release()
		return nil, perr
	}
	if t.Omit+t.Duration > left {
		t.Duration = (left - t.Omit).Truncate(100 * time.Millisecond)
		log.Info("length fitted to the scrape's timeout", "length", t.Duration)
	}
	log.Info("test", "test", t.Kind, "length", t.Duration, "omit", t.Omit, "parallel", t.Parallel)
	// The measurement logs apart: its lines join the probe's log only
	// when the target turned out to be a wirespeed server.
	mlogBuf := &limitWriter{n: maxProbeLog}
	mlog := slog.New(slog.NewTextHandler(mlogBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mr, done := x.measure(ctx, m, dial, t, mlog)
	if !done {
		// The answer is due: a stored 0 now, never a gap. The test goes
		// on without the probe until Measure returns (a client that
		// waits for a server's result beyond its context); it keeps the
		// target's turn, since that server is still busy, but gives
		// back the global slot, so that a server that never answers
		// holds no other target's probe back.
		finish := turn.leave()
		go func() {
			<-mr.done
			finish()
		}()
		logBuf.Write([]byte(mlogBuf.seal()))
		x.log.Warn("probe answered at its deadline; its test goes on without it", "id", rec.ID, "target", dial)
		return nil, fail(reasonTest, "no result from %s by the scrape's deadline: the server did not end the test in time", dial)
	}
	if errors.Is(mr.err, ErrNotReached) {
		// Closed, silent, another service: the client is told one
		// sentence at the deadline, whichever: told apart, with a
		// banner's first bytes quoted, they made the exporter a port
		// scanner of every allowed address. The cause is in the exporter's
		// own log.
		turn.release()
		mlogBuf.seal()
		x.log.Info("probe's target not reached as a wirespeed server", "id", rec.ID, "target", dial, "err", mr.err)
		f := fail(reasonTest, "%s", notReached(dial))
		f.atDeadline = true
		return nil, f
	}
	logBuf.Write([]byte(mlogBuf.seal()))
	turn.release()
	res := &mr.res
	if mr.err != nil {
		if len(res.Directions) > 0 {
			return res, fail(reasonTest, "%v", mr.err)
		}
		return nil, fail(reasonTest, "%v", mr.err)
	}
	if res.Interrupted {
		return res, fail(reasonTest, "the test was cut short before its end (the scrape's timeout, or the server stopping it)")
	}
	// A figure no measurement gives (+Inf, below 0, past any link) is no
	// result: probe_success 0, and nothing of it exported or kept.
	if err := result.CheckJoined(*res); err != nil {
		return nil, fail(reasonTest, "the result from %s holds a figure no measurement gives: %v", dial, err)
	}
	return res, nil
}

// ErrNotReached is what a Measure's error wraps when the target could not
// be reached as a wirespeed server: the connection, the TLS handshake or
// the hello failed (nothing listens, nothing answers, another service
// answered). The exporter then tells its client one sentence at the
// probe's deadline, the same whatever the cause, and logs the cause.
var ErrNotReached = errors.New("not reached as a wirespeed server")

// notReached is what a client is told of a target not reached.
func notReached(target string) string {
	return fmt.Sprintf("%s could not be reached as a wirespeed server (the exporter's log has the cause)", target)
}

// measureGrace is how long before the probe's deadline its test's context
// ends: Measure returns when its context ends, in principle, and the
// grace lets it do so before the answer is due.
const measureGrace = 250 * time.Millisecond

// measurement is a Measure's return, read once done is closed.
type measurement struct {
	res  result.Result
	err  error
	done chan struct{}
}

// measure runs the module's Measure in a goroutine of its own and waits
// for it until ctx ends at the latest: ok is false when Measure had not
// returned by then, and mr.done is closed when it does. Measure's context
// ends measureGrace before ctx's deadline.
func (x *Exporter) measure(ctx context.Context, m *Module, dial string, t spec.Test, log *slog.Logger) (mr *measurement, ok bool) {
	deadline, _ := ctx.Deadline()
	mctx, cancel := context.WithDeadline(ctx, deadline.Add(-measureGrace))
	mr = &measurement{done: make(chan struct{})}
	go func() {
		defer close(mr.done)
		defer cancel()
		mr.res, mr.err = m.Plan.Measure(mctx, dial, t, log)
	}()
	select {
	case <-mr.done:
		return mr, true
	case <-ctx.Done():
		return mr, false
	}
}

// fits refuses t when what is left of the scrape (its timeout less the
// offset and the set-up) cannot hold it: its length when the module set
// one, MinFittedLength when the length is to be fitted. waited is the
// time spent in line, for the message.
func (x *Exporter) fits(m *Module, t spec.Test, left, waited time.Duration) *probeFailure {
	need := t.Omit + t.Duration
	if need <= left || !m.Plan.LengthSet && left-t.Omit >= MinFittedLength {
		return nil
	}
	shortest := need
	what := fmt.Sprintf("runs %s", testLength(t.Omit, t.Duration))
	if !m.Plan.LengthSet {
		shortest = t.Omit + MinFittedLength
		what = fmt.Sprintf("needs at least %s", testLength(t.Omit, MinFittedLength))
	}
	return fail(reasonCannotFit, "module %q %s and about %v more to set up, but the scrape leaves %v (its timeout less --timeout-offset %v%s): raise the job's scrape_timeout to at least %v, or shorten the module's length",
		m.Name, what, x.opts.Setup, max(0, left+x.opts.Setup).Round(time.Millisecond), x.opts.TimeoutOffset,
		waitedNote(waited), ceilSecond(shortest+x.opts.Setup+x.opts.TimeoutOffset+waited))
}

// testLength says how long a test runs, its warm-up named when it has one.
func testLength(omit, length time.Duration) string {
	if omit == 0 {
		return length.String()
	}
	return fmt.Sprintf("%v (warm-up %v and length %v)", omit+length, omit, length)
}

// ceilSecond rounds d up to whole seconds, for a timeout to advise.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

func waitedNote(w time.Duration) string {
	if w < 10*time.Millisecond {
		return ""
	}
	return fmt.Sprintf(", after %v in line", w.Round(time.Millisecond))
}

// resolve finds the address to dial: the target's own when it is one,
// else the first of the host's addresses of the test's IP version that
// --allow-targets allows. The address checked is the address dialled, so
// a name that resolves differently a moment later cannot slip past.
func (x *Exporter) resolve(ctx context.Context, host string, ipVersion int, log *slog.Logger) (netip.Addr, *probeFailure) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.Unmap()}
	} else {
		network := spec.LookupNetwork(ipVersion)
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		found, err := x.opts.Resolver.LookupNetIP(rctx, network, host)
		if err != nil {
			return netip.Addr{}, fail(reasonResolve, "looking up %s: %v", host, err)
		}
		for _, a := range found {
			addrs = append(addrs, a.Unmap())
		}
		log.Info("resolved", "host", host, "addresses", fmt.Sprint(addrs))
	}
	var wrongFamily []netip.Addr
	for _, a := range addrs {
		if ipVersion == 4 && !a.Is4() || ipVersion == 6 && !a.Is6() {
			wrongFamily = append(wrongFamily, a)
			continue
		}
		if x.allowed(a) {
			return a, nil
		}
	}
	if len(wrongFamily) == len(addrs) {
		return netip.Addr{}, fail(reasonBadTarget, "%s is not an IPv%d address, which the module's test asks for", host, ipVersion)
	}
	return netip.Addr{}, fail(reasonNotAllowed, "%s (%v) is outside --allow-targets %v: the exporter probes only the networks it was told to", host, addrs, x.opts.AllowTargets)
}

func (x *Exporter) allowed(a netip.Addr) bool {
	if len(x.opts.AllowTargets) == 0 {
		return true
	}
	for _, p := range x.opts.AllowTargets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// hostName is a DNS name as a target may give it.
var hostName = regexp.MustCompile(`^([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$`)

// ParseTarget splits a probe's target, HOST or HOST:PORT with an IPv6
// address bare or in brackets, and checks both parts. port is the port
// when the target gives none.
func ParseTarget(target string, port int) (host string, p int, err error) {
	switch {
	case target == "":
		return "", 0, errors.New("no target: add target=HOST or target=HOST:PORT")
	case len(target) > 260:
		return "", 0, fmt.Errorf("target of %d characters: a host name has at most 253", len(target))
	case strings.Contains(target, "://") || strings.ContainsAny(target, "/?#@ \t\r\n"):
		return "", 0, fmt.Errorf("target %q is not HOST[:PORT]: give a wirespeed server's host and port, no scheme or path", clip(target))
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(target, "["), "]")); err == nil && a.Zone() == "" {
		return a.String(), port, nil
	}
	h, ps, err := net.SplitHostPort(target)
	if err != nil {
		h, ps = target, ""
		if strings.Contains(target, ":") {
			return "", 0, fmt.Errorf("target %q is not HOST[:PORT]: write HOST, HOST:PORT or [IPv6]:PORT", clip(target))
		}
	}
	if ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("target %q: port %q must be a number from 1 to 65535", clip(target), clip(ps))
		}
		port = n
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", 0, fmt.Errorf("target %q: an IPv6 zone is not supported", clip(target))
		}
		return a.String(), port, nil
	}
	if len(h) > 253 || !hostName.MatchString(h) {
		return "", 0, fmt.Errorf("target %q: %q is neither an IP address nor a host name", clip(target), clip(h))
	}
	return h, port, nil
}

// clip shortens what a client sent before it goes into a log or answer.
func clip(s string) string {
	const n = 80
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "..."
	}
	return s
}

// limitWriter keeps the first n bytes written and drops the rest, saying
// so once. It is safe for concurrent use: a test that outlives its probe
// may still log into it, and seal ends that.
type limitWriter struct {
	mu      sync.Mutex
	w       bytes.Buffer
	n       int
	clipped bool
	sealed  bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.sealed:
	case l.w.Len()+len(p) > l.n:
		if !l.clipped {
			l.w.WriteString("... (log cut at 64 KiB)\n")
			l.clipped = true
		}
	default:
		l.w.Write(p)
	}
	return len(p), nil
}

// seal drops whatever is written from now on and returns what was kept.
func (l *limitWriter) seal() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sealed = true
	return l.w.String()
}

// remember keeps rec among the recent probes.
func (x *Exporter) remember(rec *probeRecord) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.recent = append(x.recent, rec)
	if len(x.recent) > recentProbes {
		x.recent = append(x.recent[:0:0], x.recent[len(x.recent)-recentProbes:]...)
	}
}
