package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// The metrics of a probe's result. Every figure is in base units with the
// unit in its name (bits per second, seconds, ratios), as Prometheus's
// naming rules ask; a direction's figures carry direction
// (client_to_server, server_to_client, request_response), a side's
// figures side (local: the exporter, remote: the server).
var (
	descStarted = prometheus.NewDesc("wirespeed_probe_started_timestamp_seconds",
		"When the probe's test started, in seconds since the epoch: the result document's started.", nil, nil)
	descLength = prometheus.NewDesc("wirespeed_probe_length_seconds",
		"The measurement window the probe asked for, after fitting it to the scrape's timeout.", nil, nil)
	descThroughput = prometheus.NewDesc("wirespeed_probe_throughput_bits_per_second",
		"Payload bits per second the receiver counted over its window: the result of a stream test.", []string{"direction"}, nil)
	descSenderThroughput = prometheus.NewDesc("wirespeed_probe_sender_throughput_bits_per_second",
		"Payload bits per second the sender counted over its window.", []string{"direction"}, nil)
	descBytes = prometheus.NewDesc("wirespeed_probe_received_bytes",
		"Payload bytes the receiver counted over its window.", []string{"direction"}, nil)
	descElapsed = prometheus.NewDesc("wirespeed_probe_elapsed_seconds",
		"The receiver's measured window.", []string{"direction"}, nil)
	descRetransmits = prometheus.NewDesc("wirespeed_probe_tcp_retransmits",
		"TCP segments the sender retransmitted over its window.", []string{"direction"}, nil)
	descRTT = prometheus.NewDesc("wirespeed_probe_tcp_rtt_seconds",
		"The sending side's smoothed TCP round-trip time at the window's end, the mean over its streams (the requester's for TCP_RR).", []string{"direction"}, nil)
	descUDPSent = prometheus.NewDesc("wirespeed_probe_udp_sent_packets",
		"UDP datagrams sent over the receiver's window.", []string{"direction"}, nil)
	descUDPLost = prometheus.NewDesc("wirespeed_probe_udp_lost_packets",
		"UDP datagrams sent over the receiver's window that never arrived.", []string{"direction"}, nil)
	descUDPLoss = prometheus.NewDesc("wirespeed_probe_udp_loss_ratio",
		"Lost over sent UDP datagrams, from 0 to 1.", []string{"direction"}, nil)
	descUDPJitter = prometheus.NewDesc("wirespeed_probe_udp_jitter_seconds",
		"The receiver's RFC 3550 jitter at the window's end.", []string{"direction"}, nil)
	descTPS = prometheus.NewDesc("wirespeed_probe_rr_transactions_per_second",
		"Request/response transactions completed per second.", nil, nil)
	descRRTimeouts = prometheus.NewDesc("wirespeed_probe_rr_timeouts",
		"Request/response transactions given up without an answer.", nil, nil)
	descLatency = prometheus.NewDesc("wirespeed_probe_rr_latency_seconds",
		"Request/response latency over the window at a quantile (0 is the minimum, 1 the maximum).", []string{"quantile"}, nil)
	descLatencyMean = prometheus.NewDesc("wirespeed_probe_rr_latency_mean_seconds",
		"Mean request/response latency over the window.", nil, nil)
	descCPU = prometheus.NewDesc("wirespeed_probe_cpu_utilization_ratio",
		"A side's CPU utilisation over its window, all CPUs, from 0 to 1.", []string{"side"}, nil)
	descDemand = prometheus.NewDesc("wirespeed_probe_service_demand_seconds_per_byte",
		"A side's CPU time, all CPUs, per payload byte moved (netperf's service demand, in seconds per byte rather than us/KB).", []string{"side"}, nil)
	descDemandTr = prometheus.NewDesc("wirespeed_probe_service_demand_seconds_per_transaction",
		"A side's CPU time, all CPUs, per request/response transaction.", []string{"side"}, nil)
	descLimit = prometheus.NewDesc("wirespeed_probe_limit_info",
		"What limited the result (docs/limits.md): always 1, with the kind and the side whose resource it was.", []string{"direction", "kind", "side"}, nil)
	descWarnings = prometheus.NewDesc("wirespeed_probe_warnings",
		"Warnings the result carries (the debug log and /result list them).", nil, nil)
)

// resultCollector gives a result's figures as metrics, in a probe's own
// registry.
type resultCollector struct{ res *result.Result }

func (c resultCollector) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(c, ch)
}

func (c resultCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.res
	g := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	g(descStarted, float64(r.Started.UnixNano())/1e9)
	g(descLength, r.Spec.Duration.Seconds())
	g(descWarnings, float64(len(r.Warnings)))
	rr := false
	for _, d := range r.Directions {
		dir := string(d.Direction)
		s := d.Summary
		if s.RRSummary != nil {
			rr = true
			g(descTPS, s.TransactionsPerSecond)
			g(descRRTimeouts, float64(s.Timeouts))
			l := s.Latency
			for _, q := range []struct {
				q string
				v float64
			}{{"0", l.Min}, {"0.5", l.P50}, {"0.9", l.P90}, {"0.99", l.P99}, {"0.999", l.P999}, {"1", l.Max}} {
				g(descLatency, q.v/1e6, q.q)
			}
			g(descLatencyMean, l.Mean/1e6)
		} else {
			g(descThroughput, s.BitsPerSecond, dir)
			g(descSenderThroughput, s.SenderBitsPerSecond, dir)
			g(descBytes, float64(s.Bytes), dir)
			g(descElapsed, s.ElapsedS, dir)
		}
		if u := s.UDPSummary; u != nil {
			g(descUDPSent, float64(u.PacketsSent), dir)
			g(descUDPLost, float64(u.Lost), dir)
			g(descUDPLoss, u.LossPct/100, dir)
			g(descUDPJitter, u.JitterMs/1e3, dir)
		} else if tcp(r.Spec.Kind) {
			g(descRetransmits, float64(s.Retransmits), dir)
			if rtt, ok := senderRTT(d); ok {
				g(descRTT, rtt, dir)
			}
		}
		if lim := s.Limit; lim != nil {
			g(descLimit, 1, dir, string(lim.Kind), string(lim.Side))
		}
	}
	for _, side := range []struct {
		name string
		cpu  *measure.CPU
	}{{"local", r.Summary.LocalCPU}, {"remote", r.Summary.RemoteCPU}} {
		if side.cpu == nil {
			continue
		}
		g(descCPU, side.cpu.UtilPct/100, side.name)
		if rr {
			g(descDemandTr, side.cpu.ServiceDemandMicrosPerTransaction/1e6, side.name)
		} else {
			g(descDemand, side.cpu.ServiceDemandMicrosPerKB/1e6/1024, side.name)
		}
	}
}

func tcp(k spec.Kind) bool {
	switch k {
	case spec.TCPStream, spec.TCPMaerts, spec.TCPBidir, spec.TCPRR, spec.TCPCRR:
		return true
	}
	return false
}

// senderRTT is the mean smoothed RTT, in seconds, of the direction's
// sending (or requesting) streams that have TCP_INFO.
func senderRTT(d result.DirectionResult) (float64, bool) {
	var sum float64
	n := 0
	for _, s := range d.Streams {
		if ti := s.Sender.TCPInfo; ti != nil && ti.RTTMicros > 0 {
			sum += ti.RTTMicros
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n) / 1e6, true
}
