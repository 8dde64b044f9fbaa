// Package exporter is wirespeed's Prometheus exporter in the multi-target
// pattern of blackbox_exporter: Prometheus scrapes
// /probe?target=HOST[:PORT]&module=NAME, the exporter runs the module's
// test against the wirespeed server at HOST and answers with the result
// as metrics. It owns the modules file (config.go: parsing, checking,
// reloading), the probe (probe.go: target checks, the timeout fitted to
// the scrape's, the metrics of a result), the queues that keep two probes
// off one server (queue.go), its own metrics and the / page (page.go),
// and the bounds of what the probes' results take of the archive
// (keep.go).
//
// It reads no flags: the CLI gives it a Builder that turns a module's
// keys into a test the way `wirespeed run` turns its flags, and the
// measurement to run.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// Plan is what a module runs: the test built from its keys, and how.
type Plan struct {
	Test spec.Test
	// LengthSet says the module chose its length (length, bytes or
	// blocks): a probe that cannot give it that long is refused, never
	// shortened. Without it the length is fitted to the scrape.
	LengthSet bool
	// Port is the server's port when the target names none.
	Port int
	// Measure runs t against the server at addr (an IP and port) once.
	Measure Measure
}

// Measure runs one test against the wirespeed server at addr, logging to
// log; it returns when ctx ends at the latest.
type Measure func(ctx context.Context, addr string, t spec.Test, log *slog.Logger) (result.Result, error)

// Resolver looks up a target's host name.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure an Exporter.
type Options struct {
	// ConfigPath is the modules file, read by New and by each reload.
	ConfigPath string
	Build      Builder
	// AllowTargets are the networks a target's address must be in; empty
	// allows any address (the default, and the exporter's main risk: it
	// makes whoever can reach it send traffic; see docs/exporter.md).
	AllowTargets []netip.Prefix
	// MaxLength is the longest test (warm-up and length) a probe may run;
	// 0 for no limit beyond the scrape's timeout.
	MaxLength time.Duration
	// MaxConcurrent is how many probes run at once over all targets.
	MaxConcurrent int
	// QueueSize is how many probes of one target may wait while one runs.
	QueueSize int
	// MaxWaiting is how many probes may wait over all targets; 0 for
	// DefaultMaxWaiting. One more is answered queue_full at once, so
	// that distinct targets cannot make the exporter hold probes without
	// bound.
	MaxWaiting int
	// TimeoutOffset is taken from the scrape's timeout, so that the
	// answer reaches Prometheus before it gives up.
	TimeoutOffset time.Duration
	// DefaultTimeout is the timeout of a request without Prometheus's
	// X-Prometheus-Scrape-Timeout-Seconds header (a person with curl).
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout a scrape may give a probe (a
	// larger header is taken as MaxTimeout); 0 for DefaultMaxTimeout. It
	// bounds how long a probe holds its place in line and its slot.
	MaxTimeout time.Duration
	// Setup is the time a probe allows beyond its test's warm-up and
	// length: connecting, the server's hello and CPU baseline, the data
	// connections, the result's exchange.
	Setup time.Duration
	// The HTTP server's limits (Server, Listener); 0 for the defaults.
	// MaxConns is how many connections may be open at once.
	MaxConns          int
	IdleTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// Resolver looks up host names; nil for net.DefaultResolver.
	Resolver Resolver
	// Tool names the exporter in the results documents it keeps.
	Tool result.Tool
	// Keep, when set, is given every probe's results document (a failed
	// test's partial one too) once the probe's answer has been sent: the
	// CLI's --archive. It returns when the document is kept.
	Keep func(ctx context.Context, doc result.Document) error
	// ArchiveEvery and ArchiveBytesPerHour bound what the probes give
	// Keep (keep.go): at most one result of a server in ArchiveEvery, at
	// most ArchiveBytesPerHour of their JSON over all servers, each cut
	// to MaxArchivedString a string and MaxArchivedWarnings warnings; 0
	// for DefaultArchiveEvery and DefaultArchiveBytesPerHour.
	ArchiveEvery        time.Duration
	ArchiveBytesPerHour int64
	Logger              *slog.Logger
	// Now is the clock, for tests; nil for time.Now.
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultQueueSize      = 4
	DefaultMaxConcurrent  = 4
	DefaultMaxWaiting     = 16
	DefaultMaxTimeout     = 120 * time.Second
	DefaultTimeoutOffset  = 500 * time.Millisecond
	DefaultDefaultTimeout = 120 * time.Second
	DefaultSetup          = 2 * time.Second
	// MinFittedLength is the shortest window a fitted probe runs: a
	// shorter one says little more than its set-up.
	MinFittedLength = time.Second
	// recentProbes is how many probes the / page and /logs keep.
	recentProbes = 100
)

// Exporter answers /probe and keeps its own metrics. It is safe for
// concurrent use.
type Exporter struct {
	opts    Options
	log     *slog.Logger
	config  atomic.Pointer[Config]
	reload  sync.Mutex // one reload at a time
	queues  *queues
	metrics *ownMetrics
	nextID  atomic.Uint64
	conns   atomic.Int64 // HTTP connections open (Listener)

	mu     sync.Mutex
	recent []*probeRecord // oldest first, at most recentProbes
}

// New loads the configuration and returns the exporter.
func New(opts Options) (*Exporter, error) {
	if opts.Build == nil {
		return nil, errors.New("exporter: no module builder")
	}
	if opts.MaxConcurrent < 1 {
		return nil, fmt.Errorf("at most %d probes at once: must be at least 1", opts.MaxConcurrent)
	}
	if opts.QueueSize < 0 {
		return nil, fmt.Errorf("queue of %d probes per target: must be 0 or more", opts.QueueSize)
	}
	if opts.MaxWaiting <= 0 {
		opts.MaxWaiting = DefaultMaxWaiting
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = DefaultMaxTimeout
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultDefaultTimeout
	}
	opts.DefaultTimeout = min(opts.DefaultTimeout, opts.MaxTimeout)
	if opts.Setup <= 0 {
		opts.Setup = DefaultSetup
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	x := &Exporter{opts: opts, log: opts.Logger}
	if x.log == nil {
		x.log = slog.Default()
	}
	if opts.Keep != nil {
		if opts.ArchiveEvery <= 0 {
			opts.ArchiveEvery = DefaultArchiveEvery
		}
		if opts.ArchiveBytesPerHour <= 0 {
			opts.ArchiveBytesPerHour = DefaultArchiveBytesPerHour
		}
		x.opts.Keep = newArchiveGate(opts.Keep, opts.ArchiveEvery, opts.ArchiveBytesPerHour, x.log, opts.Now).Keep
	}
	x.queues = newQueues(opts.QueueSize, opts.MaxWaiting, opts.MaxConcurrent)
	x.metrics = newOwnMetrics(x.queues, &x.conns)
	if err := x.Reload(); err != nil {
		return nil, err
	}
	return x, nil
}

// Config returns the configuration in force.
func (x *Exporter) Config() *Config { return x.config.Load() }

// Reload reads the modules file again. A file with a mistake leaves the
// configuration in force as it was, and the error says what is wrong.
// Probes already running finish with the module they started with.
func (x *Exporter) Reload() error {
	x.reload.Lock()
	defer x.reload.Unlock()
	c, err := Load(x.opts.ConfigPath, x.opts.Build)
	if err != nil {
		x.metrics.reloadOK.Set(0)
		return err
	}
	x.config.Store(c)
	x.metrics.reloadOK.Set(1)
	x.metrics.reloadTime.Set(float64(x.opts.Now().UnixNano()) / 1e9)
	x.metrics.modules.Set(float64(len(c.Modules)))
	return nil
}

// Handler serves /probe, /metrics, /-/reload, /logs, /result, /recent
// and the / page.
func (x *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/probe", x.serveProbe)
	mux.Handle("/metrics", promhttp.HandlerFor(x.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/-/reload", x.serveReload)
	mux.HandleFunc("/logs", x.serveLog)
	mux.HandleFunc("/result", x.serveResult)
	mux.HandleFunc("/recent", x.serveRecent)
	mux.HandleFunc("/{$}", x.serveIndex)
	return mux
}

func (x *Exporter) serveReload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		w.Header().Set("Allow", "POST, PUT")
		http.Error(w, "reload with POST", http.StatusMethodNotAllowed)
		return
	}
	if err := x.Reload(); err != nil {
		x.log.Error("reload refused; the previous modules stay in force", "err", err)
		http.Error(w, "reload refused; the previous modules stay in force: "+err.Error(), http.StatusInternalServerError)
		return
	}
	x.log.Info("reloaded", "modules", len(x.Config().Modules))
	fmt.Fprintf(w, "reloaded: %d modules\n", len(x.Config().Modules))
}

// ownMetrics are the exporter's own, on /metrics, in a registry of their
// own (never the global one).
type ownMetrics struct {
	reg        *prometheus.Registry
	probes     *prometheus.CounterVec // by module, result
	failures   *prometheus.CounterVec // by reason
	duration   *prometheus.HistogramVec
	reloadOK   prometheus.Gauge
	reloadTime prometheus.Gauge
	modules    prometheus.Gauge
}

// The reasons a probe fails, the reason label of
// wirespeed_exporter_probe_failures_total.
const (
	reasonUnknownModule = "unknown_module"
	reasonBadTarget     = "bad_target"
	reasonResolve       = "resolve"
	reasonNotAllowed    = "target_not_allowed"
	reasonTooLong       = "max_length"
	reasonCannotFit     = "scrape_timeout"
	reasonQueueFull     = "queue_full"
	reasonQueueTimeout  = "queue_timeout"
	reasonTest          = "test_failed"
)

var reasons = []string{reasonUnknownModule, reasonBadTarget, reasonResolve, reasonNotAllowed, reasonTooLong,
	reasonCannotFit, reasonQueueFull, reasonQueueTimeout, reasonTest}

func newOwnMetrics(q *queues, conns *atomic.Int64) *ownMetrics {
	const ns, sub = "wirespeed", "exporter"
	m := &ownMetrics{
		reg: prometheus.NewRegistry(),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "probes_total",
			Help: "Probes answered, by module (empty for a module not in the configuration) and result (success, failure)."}, []string{"module", "result"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "probe_failures_total",
			Help: "Failed probes by reason: unknown_module, bad_target, resolve, target_not_allowed, max_length, scrape_timeout (the test cannot fit), queue_full, queue_timeout, test_failed."}, []string{"reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "probe_duration_seconds",
			Help:    "Time from a probe's request to its answer, queueing included, by module.",
			Buckets: []float64{0.01, 0.1, 1, 2, 5, 10, 15, 20, 30, 60, 120}}, []string{"module"}),
		reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "config_last_reload_successful",
			Help: "1 when the last load of the modules file succeeded, 0 when it was refused (the previous modules stay in force)."}),
		reloadTime: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "config_last_reload_success_timestamp_seconds",
			Help: "When the modules file was last loaded successfully, in seconds since the epoch."}),
		modules: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "config_modules",
			Help: "Modules in the configuration in force."}),
	}
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "http_connections",
		Help: "HTTP connections open (at most the exporter's limit, 128 by default)."}, func() float64 { return float64(conns.Load()) })
	m.reg.MustRegister(m.probes, m.failures, m.duration, m.reloadOK, m.reloadTime, m.modules, q, open,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range reasons {
		m.failures.WithLabelValues(r)
	}
	return m
}
