package server

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// The pairwise figures of relayed tests. A server that ran a relay is the
// client of that pair: it holds the whole joined result, knows both ends,
// and lives on (a `wirespeed mesh` Job or CronJob exits as soon as it is
// done, too soon to be scraped). So every server exports the latest
// figures of the pairs it was the source of, and Prometheus scraping all
// the servers of a fleet sees every row of the mesh's matrix.

// MaxPairSeries bounds the pairs (source, destination, test) whose
// figures a server keeps: the labels come from requests, so their number
// must be bounded. Past it, the pair measured longest ago is dropped.
const MaxPairSeries = 256

type pairKey struct{ source, destination, test string }

// relayMetrics are the relay counters and the pair gauges.
type relayMetrics struct {
	relays  *prometheus.CounterVec // by result
	refused *prometheus.CounterVec // by reason

	throughput *prometheus.GaugeVec // source, destination, test
	latency    *prometheus.GaugeVec // source, destination, test, quantile
	tps        *prometheus.GaugeVec
	loss       *prometheus.GaugeVec
	measured   *prometheus.GaugeVec

	mu   sync.Mutex
	last map[pairKey]time.Time
}

func newRelayMetrics(reg *prometheus.Registry) *relayMetrics {
	const ns = "wirespeed"
	pair := []string{"source", "destination", "test"}
	r := &relayMetrics{
		relays: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "relays_total",
			Help: "Third-party tests this server ran as the client of a peer, by result (ok, interrupted, failed)."}, []string{"result"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "relays_refused_total",
			Help: "Third-party test requests refused, by reason (relay_not_allowed, relay_peer_not_allowed, relay_unauthenticated)."}, []string{"reason"}),
		throughput: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "pair_throughput_bits_per_second",
			Help: "Latest payload throughput of a relayed test from source to destination, as its receiver counted it (both directions summed for TCP_BIDIR)."}, pair),
		latency: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "pair_latency_seconds",
			Help: "Latest transaction latency of a relayed request/response test, by quantile (0.5, 0.9, 0.99)."}, append(pair, "quantile")),
		tps: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "pair_transactions_per_second",
			Help: "Latest transaction rate of a relayed request/response test."}, pair),
		loss: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "pair_udp_loss_ratio",
			Help: "Latest datagram loss of a relayed UDP_STREAM test, lost over sent."}, pair),
		measured: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "pair_last_measured_timestamp_seconds",
			Help: "When the pair's figures were last measured (Unix time): alert on it to notice a mesh that stopped running."}, pair),
		last: map[pairKey]time.Time{},
	}
	reg.MustRegister(r.relays, r.refused, r.throughput, r.latency, r.tps, r.loss, r.measured)
	for _, s := range []string{"ok", "interrupted", "failed"} {
		r.relays.WithLabelValues(s)
	}
	for _, s := range []string{relayNotAllowed, relayPeerNotAllowed, relayUnauthenticated} {
		r.refused.WithLabelValues(s)
	}
	return r
}

func (m *Metrics) relayRefused(reason string) {
	if m != nil {
		m.relays.refused.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) relayDone(result string) {
	if m != nil {
		m.relays.relays.WithLabelValues(result).Inc()
	}
}

// pairMeasured sets the gauges of the pair to res's figures.
func (m *Metrics) pairMeasured(source, destination string, res result.Result, now time.Time) {
	if m == nil {
		return
	}
	r := m.relays
	k := pairKey{source, destination, string(res.Spec.Kind)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.last[k]; !ok && len(r.last) >= MaxPairSeries {
		var oldest pairKey
		var t time.Time
		for kk, tt := range r.last {
			if t.IsZero() || tt.Before(t) {
				oldest, t = kk, tt
			}
		}
		r.forget(oldest)
	}
	r.last[k] = now
	l := []string{k.source, k.destination, k.test}
	s := res.Summary
	if res.Spec.Kind.RR() && s.RRSummary != nil {
		for _, q := range []struct {
			name string
			us   float64
		}{{"0.5", s.Latency.P50}, {"0.9", s.Latency.P90}, {"0.99", s.Latency.P99}} {
			r.latency.WithLabelValues(append(l, q.name)...).Set(q.us / 1e6)
		}
		r.tps.WithLabelValues(l...).Set(s.TransactionsPerSecond)
	} else {
		r.throughput.WithLabelValues(l...).Set(s.BitsPerSecond)
	}
	if res.Spec.Kind == spec.UDPStream && s.UDPSummary != nil {
		r.loss.WithLabelValues(l...).Set(s.LossPct / 100)
	}
	r.measured.WithLabelValues(l...).Set(float64(now.UnixNano()) / 1e9)
}

// forget drops every series of a pair. r.mu is held.
func (r *relayMetrics) forget(k pairKey) {
	delete(r.last, k)
	l := prometheus.Labels{"source": k.source, "destination": k.destination, "test": k.test}
	r.throughput.Delete(l)
	r.tps.Delete(l)
	r.loss.Delete(l)
	r.measured.Delete(l)
	r.latency.DeletePartialMatch(l)
}
