package archive

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// Row is one result in the archive: the indexed columns of one measured
// point of a document (a run, a tradeoff's run, a sweep's point, a
// matrix row's point, a mesh pair). The whole document is kept beside
// it; Row holds what queries select and history plots.
type Row struct {
	ID         int64
	DocumentID int64
	// Path is where in its document the result is: "" for a run's
	// top-level result, "runs[1]", "points[3]",
	// "matrix.rows[2].points[0]", "pairs[4]".
	Path    string
	Started time.Time
	// Command is the command that wrote the document (run, sweep,
	// matrix, mesh); Test the test kind (TCP_STREAM, ...).
	Command, Test string
	// Source is the client side's host (a mesh pair's source), Destination
	// the server's.
	Source, Destination string
	// MsgSize is bytes per send call (the request size of a
	// request/response test).
	MsgSize int
	// Settings are the settings that, with the above, define a series:
	// the spec's, less the ones that do not change what is measured
	// (window length, interval, warm-up, CPU sampling, client port), and a
	// matrix row's settings; "key=value" sorted, space-separated.
	Settings string
	// Series is the key of the series the row belongs to (SeriesKey).
	Series string

	ThroughputBPS float64
	// The figures a result may lack are nil then. The latency
	// percentiles are a request/response test's transaction times, and
	// an RRUL test's round trips under load (its loaded phase, UDP and
	// TCP probes together).
	LatencyP50Micros, LatencyP90Micros, LatencyP99Micros *float64
	// RTTMicros is a TCP stream test's round-trip time: its senders'
	// smoothed RTT (the largest of its streams' at each interval's end),
	// the mean over the intervals. Nil for other tests, and for rows
	// archived before schema 3.
	RTTMicros                 *float64
	LossPct                   *float64
	LocalCPUPct, RemoteCPUPct *float64
	// LocalServiceDemand and RemoteServiceDemand are CPU microseconds per
	// KB moved (per transaction for request/response tests).
	LocalServiceDemand, RemoteServiceDemand *float64
	// CILo and CIHi bound the throughput's confidence interval when the
	// result is a mean over iterations.
	CILo, CIHi *float64
	// Iterations is how many runs the result is the mean of (1 for one);
	// IterThroughput and IterLatencyP50 are each iteration's figure.
	Iterations     int
	IterThroughput []float64
	IterLatencyP50 []float64

	LimitKind   string
	Title       string
	Labels      map[string]string
	ToolVersion string
	// EnvID refers to the environment of both sides (Env).
	EnvID int64
}

// Env is the environment of both sides of a result, as the items that
// change results (sysinfo.Env.Fields): the kernel, driver, offloads, MTU,
// qdisc, congestion control, sysctls of the client's side (Local) and
// the server's (Remote).
type Env struct {
	Local  []sysinfo.EnvField `json:"local,omitempty"`
	Remote []sysinfo.EnvField `json:"remote,omitempty"`
}

// SeriesKey is the key of a series: the same source, destination, test,
// message size and settings.
func SeriesKey(source, destination, test string, msgSize int, settings string) string {
	return strings.Join([]string{source, destination, test, strconv.Itoa(msgSize), settings}, "|")
}

// ParseSeriesKey splits a key made by SeriesKey.
func ParseSeriesKey(key string) (source, destination, test string, msgSize int, settings string, ok bool) {
	parts := strings.SplitN(key, "|", 5)
	if len(parts) != 5 {
		return "", "", "", 0, "", false
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil {
		return "", "", "", 0, "", false
	}
	return parts[0], parts[1], parts[2], n, parts[4], true
}

// ErrNotResult is wrapped by the errors of documents that hold no
// result to archive.
var ErrNotResult = fmt.Errorf("not a wirespeed results or mesh document")

// extracted is a row with the environment it refers to, before the
// archive gave either an id.
type extracted struct {
	Row
	env Env
}

// rowsOf flattens a results document into its rows. It fails on a
// document that holds no measured result.
func rowsOf(doc *result.Document) ([]extracted, error) {
	var out []extracted
	add := func(path string, r *result.Result, msgSize int, extra string) {
		if r == nil || len(r.Directions) == 0 {
			return
		}
		src := r.Local.Hostname
		dst := r.Remote.Hostname
		if dst == "" || dst == src {
			if h := hostOf(r.Remote.Address); h != "" {
				dst = h
			}
		}
		out = append(out, rowOf(path, doc.Command, doc.Title, doc.Labels, doc.Tool.Version, r, src, dst, msgSize, extra))
	}
	switch doc.Kind() {
	case result.KindRun:
		add("", &doc.Result, sizeOf(doc.Spec), "")
	case result.KindTradeoff:
		for i := range doc.Runs {
			add(fmt.Sprintf("runs[%d]", i), &doc.Runs[i], sizeOf(doc.Runs[i].Spec), "")
		}
	case result.KindSweep:
		for i := range doc.Points {
			p := &doc.Points[i]
			add(fmt.Sprintf("points[%d]", i), &p.Result, p.MsgSize, "")
		}
	case result.KindMatrix:
		for i, row := range doc.Matrix.Rows {
			for j := range row.Points {
				p := &doc.Matrix.Rows[i].Points[j]
				add(fmt.Sprintf("matrix.rows[%d].points[%d]", i, j), &p.Result, p.MsgSize, row.Label)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the document holds no measured result: %w", ErrNotResult)
	}
	return out, nil
}

// rowsOfMesh flattens a mesh round into a row per measured pair.
func rowsOfMesh(doc *result.MeshDocument) ([]extracted, error) {
	var out []extracted
	for i, p := range doc.Pairs {
		r := p.Result
		if r == nil || len(r.Directions) == 0 {
			continue
		}
		extra := ""
		if p.Via == result.ViaRelay {
			extra = "via=relay"
		}
		out = append(out, rowOf(fmt.Sprintf("pairs[%d]", i), doc.Command, "", nil, doc.Tool.Version, r, p.Source, p.Destination, sizeOf(r.Spec), extra))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the mesh round has no measured pair: %w", ErrNotResult)
	}
	return out, nil
}

func sizeOf(t spec.Test) int {
	if t.Kind.RR() {
		return t.RequestSize
	}
	return t.SendSize
}

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && !strings.HasSuffix(addr, "]") {
		addr = addr[:i]
	}
	return strings.Trim(addr, "[]")
}

func rowOf(path, command, title string, labels map[string]string, version string, r *result.Result, src, dst string, msgSize int, extra string) extracted {
	s := r.Summary
	row := Row{
		Path:          path,
		Started:       r.Started.UTC(),
		Command:       command,
		Test:          string(r.Spec.Kind),
		Source:        src,
		Destination:   dst,
		MsgSize:       msgSize,
		Settings:      settingsOf(r.Spec, extra),
		ThroughputBPS: s.BitsPerSecond,
		Iterations:    1,
		Title:         title,
		Labels:        maps.Clone(labels), // scrubbed in place

		ToolVersion: version,
	}
	row.Series = SeriesKey(row.Source, row.Destination, row.Test, row.MsgSize, row.Settings)
	if rr := s.RRSummary; rr != nil && rr.Latency.Count > 0 {
		row.LatencyP50Micros = ptr(rr.Latency.P50)
		row.LatencyP90Micros = ptr(rr.Latency.P90)
		row.LatencyP99Micros = ptr(rr.Latency.P99)
	}
	if u := s.UnderLoad; u != nil && u.Loaded.All.Samples > 0 {
		row.LatencyP50Micros = ptr(1e3 * u.Loaded.All.P50Ms)
		row.LatencyP90Micros = ptr(1e3 * u.Loaded.All.P90Ms)
		row.LatencyP99Micros = ptr(1e3 * u.Loaded.All.P99Ms)
	}
	if r.Spec.Kind != spec.UDPStream && r.Spec.Kind != spec.RRUL && !r.Spec.Kind.RR() {
		row.RTTMicros = meanRTT(r.Intervals)
	}
	if u := s.UDPSummary; u != nil {
		row.LossPct = ptr(u.LossPct)
	}
	perTr := r.Spec.Kind.RR()
	if c := s.LocalCPU; c != nil {
		row.LocalCPUPct = ptr(c.UtilPct)
		row.LocalServiceDemand = demand(c.ServiceDemandMicrosPerKB, c.ServiceDemandMicrosPerTransaction, perTr)
	}
	if c := s.RemoteCPU; c != nil {
		row.RemoteCPUPct = ptr(c.UtilPct)
		row.RemoteServiceDemand = demand(c.ServiceDemandMicrosPerKB, c.ServiceDemandMicrosPerTransaction, perTr)
	}
	if c := s.Confidence; c != nil {
		row.Iterations = c.Iterations
		if c.Lo != nil && c.Hi != nil {
			row.CILo, row.CIHi = ptr(*c.Lo), ptr(*c.Hi)
		}
	}
	if len(r.Iterations) > 1 {
		row.Iterations = len(r.Iterations)
		for _, it := range r.Iterations {
			row.IterThroughput = append(row.IterThroughput, it.BitsPerSecond)
			if it.RRSummary != nil && it.Latency.Count > 0 {
				row.IterLatencyP50 = append(row.IterLatencyP50, it.Latency.P50)
			}
		}
		if len(row.IterLatencyP50) != len(r.Iterations) {
			row.IterLatencyP50 = nil
		}
	}
	if l := s.Limit; l != nil {
		row.LimitKind = string(l.Kind)
	}
	return extracted{Row: row, env: Env{Local: r.Local.Env.Fields(), Remote: r.Remote.Env.Fields()}}
}

// meanRTT is the mean of the intervals' sender RTTs, over those that
// have one; nil when none has.
func meanRTT(ivs []result.Interval) *float64 {
	var sum float64
	n := 0
	for _, iv := range ivs {
		if iv.RTTMicros > 0 {
			sum += iv.RTTMicros
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return ptr(sum / float64(n))
}

func demand(perKB, perTr float64, rr bool) *float64 {
	v := perKB
	if rr {
		v = perTr
	}
	if v <= 0 {
		return nil
	}
	return ptr(v)
}

func ptr(v float64) *float64 { return &v }

// seriesIgnored are the spec's settings that do not change what a
// series measures: the window's length and warm-up, the interval lines,
// CPU sampling, the client's port, the test and size (columns of their
// own).
var seriesIgnored = map[string]bool{
	"test": true, "duration_s": true, "omit_s": true, "interval_s": true,
	"cpu": true, "cport": true, "send_size": true, "request_size": true,
	"payload": true, "amount_bytes": true, "amount_blocks": true,
}

// settingsOf writes the settings of t that define a series, and extra
// (a matrix row's label), as sorted "key=value" words. Zero values and
// the defaults are left out, so that the settings read as what was
// asked (`parallel=4 cc=bbr`) and a setting added to the spec later
// does not split the series of results written before it.
func settingsOf(t spec.Test, extra string) string {
	m, defaults := specMap(t), defaultSpec()
	var words []string
	for k, v := range m {
		if seriesIgnored[k] {
			continue
		}
		if d, ok := defaults[k]; ok && fmt.Sprint(d) == fmt.Sprint(v) {
			continue
		}
		var s string
		switch v := v.(type) {
		case nil:
			continue
		case bool:
			if !v {
				continue
			}
			s = "true"
		case float64:
			if v == 0 {
				continue
			}
			s = strconv.FormatFloat(v, 'g', -1, 64)
		case string:
			if v == "" {
				continue
			}
			s = v
		default:
			jb, _ := json.Marshal(v)
			s = string(jb)
			if s == "[]" || s == "{}" {
				continue
			}
		}
		words = append(words, k+"="+strings.ReplaceAll(s, " ", "_"))
	}
	if extra != "" {
		words = append(words, strings.Fields(extra)...)
	}
	sort.Strings(words)
	return strings.Join(words, " ")
}

// defaultSpec is the default spec's settings, made once: remaking them
// for every result was a tenth of an insert's CPU time.
var defaultSpec = sync.OnceValue(func() map[string]any { return specMap(spec.Default()) })

func specMap(t spec.Test) map[string]any {
	b, err := json.Marshal(t)
	if err != nil {
		return nil
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}
