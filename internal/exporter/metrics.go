package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"wirespeed/internal/record"
	"wirespeed/internal/result"
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
	// The registry's figures that have a metric: a direction's with its
	// direction label, a run's (each side's CPU, a request/response
	// test's transactions) with their own labels.
	for _, f := range record.Figures {
		m := f.Metric
		if m == nil {
			continue
		}
		if m.Run {
			if v, ok := f.Read(record.Of(r)); ok {
				g(figureDescs[m.Name], v/m.Div, m.Labels...)
			}
			continue
		}
		for i := range r.Directions {
			d := &r.Directions[i]
			if f.StreamResult && d.Summary.RRSummary != nil {
				continue
			}
			v, ok := f.Read(record.OfDirection(r.Spec.Kind, d))
			if !ok {
				continue
			}
			labels := m.Labels
			if m.Direction {
				labels = append([]string{string(d.Direction)}, labels...)
			}
			g(figureDescs[m.Name], v/m.Div, labels...)
		}
	}
	for _, d := range r.Directions {
		if lim := d.Summary.Limit; lim != nil {
			g(descLimit, 1, string(d.Direction), string(lim.Kind), string(lim.Side))
		}
	}
}

// figureDescs are the metrics of the registry's figures, by name.
var figureDescs = func() map[string]*prometheus.Desc {
	out := map[string]*prometheus.Desc{}
	for _, f := range record.Figures {
		m := f.Metric
		if m == nil || out[m.Name] != nil {
			continue
		}
		labels := m.LabelNames
		if m.Direction {
			labels = append([]string{"direction"}, labels...)
		}
		out[m.Name] = prometheus.NewDesc(m.Name, m.Help, labels, nil)
	}
	return out
}()
