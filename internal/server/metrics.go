package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"wirespeed/internal/httplimit"
)

// Metrics counts what a server does, for Prometheus. It has a registry of
// its own (never the global one), so that two servers in one process, or
// a test, do not share counters. A nil *Metrics counts nothing.
type Metrics struct {
	reg *prometheus.Registry

	served       *prometheus.CounterVec // by result
	refused      *prometheus.CounterVec // by reason
	failed       *prometheus.CounterVec // by reason
	bytes        *prometheus.CounterVec // by direction, from the server's side
	authFailures *prometheus.CounterVec // by reason
	connsRefused *prometheus.CounterVec // by reason
	active       prometheus.Gauge
	sessions     prometheus.Gauge
	relays       *relayMetrics // relayed tests and their pairs (relaymetrics.go)
}

// NewMetrics returns the server's metrics in a new registry, with the Go
// runtime's and the process's collectors beside them.
func NewMetrics() *Metrics {
	const ns = "wirespeed"
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		served: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "tests_served_total",
			Help: "Tests run to their end and answered with a result, by result (ok, interrupted)."}, []string{"result"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "tests_refused_total",
			Help: "Test requests refused before they ran, by reason (busy, invalid_spec, max_duration, max_parallel, max_udp_rate, max_dscp, max_frame, shutting_down)."}, []string{"reason"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "tests_failed_total",
			Help: "Admitted tests that failed, by reason (setup: data connections or start missing; control_lost; stream; truncated: the peer stopped sending early; shutdown)."}, []string{"reason"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "bytes_total",
			Help: "Payload bytes the server moved inside measurement windows, by direction (sent, received)."}, []string{"direction"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "auth_failures_total",
			Help: "Control connections refused by authentication, by reason (no_key, bad_offer, no_proof, bad_proof, tls_required, tls_handshake)."}, []string{"reason"}),
		connsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "connections_refused_total",
			Help: "Connections closed before a session or a test used them, by reason (max_conns_per_addr, unknown_protocol, tls_not_configured)."}, []string{"reason"}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "tests_active",
			Help: "Tests between their request and their result."}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "control_connections_active",
			Help: "Admitted control connections."}),
	}
	m.reg.MustRegister(m.served, m.refused, m.failed, m.bytes, m.authFailures, m.connsRefused, m.active, m.sessions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Known labels start at 0, so that a rate() sees the first event.
	for _, r := range []string{"ok", "interrupted"} {
		m.served.WithLabelValues(r)
	}
	for _, r := range []string{refusedBusy, refusedInvalid, refusedDuration, refusedParallel, refusedUDPRate, refusedDSCP, refusedFrame, refusedShutdown} {
		m.refused.WithLabelValues(r)
	}
	for _, r := range []string{"setup", "control_lost", "stream", "truncated", "shutdown"} {
		m.failed.WithLabelValues(r)
	}
	for _, r := range []string{"sent", "received"} {
		m.bytes.WithLabelValues(r)
	}
	for _, r := range []string{"no_key", "bad_offer", "no_proof", "bad_proof", "tls_required", "tls_handshake"} {
		m.authFailures.WithLabelValues(r)
	}
	for _, r := range []string{refusedConnsPerAdr, "unknown_protocol", "tls_not_configured"} {
		m.connsRefused.WithLabelValues(r)
	}
	m.relays = newRelayMetrics(m.reg)
	return m
}

// Registry returns the registry the metrics are in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Serve serves the metrics on ln at /metrics until ctx is cancelled,
// with the limits every HTTP server of wirespeed has (httplimit: read
// and write deadlines, idle keep-alive connections closed, connections
// and requests at once bounded).
func (m *Metrics) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "wirespeed metrics: /metrics")
	})
	hs := httplimit.Server(httplimit.Concurrent(mux, httplimit.DefaultMaxRequests), httplimit.Limits{}, nil)
	ln = httplimit.Listener(ln, httplimit.DefaultMaxConns, nil)
	if err := httplimit.Serve(ctx, hs, ln, 2*time.Second); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

func (s *Server) metrics() *Metrics { return s.cfg.Metrics }

func (s *Server) countRefused(reason string) {
	if m := s.metrics(); m != nil {
		m.refused.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) authFailure(reason string) {
	if m != nil {
		m.authFailures.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) connRefused(reason string) {
	if m != nil {
		m.connsRefused.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) sessionOpened() {
	if m != nil {
		m.sessions.Inc()
	}
}

func (m *Metrics) sessionClosed() {
	if m != nil {
		m.sessions.Dec()
	}
}

func (m *Metrics) testStarted() {
	if m != nil {
		m.active.Inc()
	}
}

func (m *Metrics) testEnded() {
	if m != nil {
		m.active.Dec()
	}
}

func (m *Metrics) testServed(result string) {
	if m != nil {
		m.served.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) testFailed(reason string) {
	if m != nil {
		m.failed.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) moved(direction string, n int64) {
	if m != nil && n > 0 {
		m.bytes.WithLabelValues(direction).Add(float64(n))
	}
}
