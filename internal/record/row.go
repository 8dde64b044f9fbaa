package record

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
// result of a document (a run, a tradeoff's run, a sweep's point, a
// matrix row's point, a mesh pair) and every figure it has. The whole
// document is kept beside it; Row holds what queries select and history
// plots.
type Row struct {
	ID         int64
	DocumentID int64
	// At is where in its document the result is.
	At      Locator
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
	// Figures are the result's figures by name (Figures' Read of the
	// result); a figure the result lacks is absent.
	Figures Values
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

// Values are figures' values by the figures' names.
type Values map[string]float64

// Get is f's value; false when absent.
func (v Values) Get(f Figure) (float64, bool) {
	x, ok := v[f.Name]
	return x, ok
}

// ValuesOf reads every figure of the registry from v.
func ValuesOf(v View) Values {
	out := Values{}
	for _, f := range Figures {
		if x, ok := f.Read(v); ok {
			out[f.Name] = x
		}
	}
	return out
}

// Samples are the iterations' values a row keeps for figure f (the
// throughput's and the p50 latency's); nil for the others.
func (r Row) Samples(f Figure) []float64 {
	switch f.Name {
	case Throughput.Name:
		return r.IterThroughput
	case LatencyP50.Name:
		return r.IterLatencyP50
	}
	return nil
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

// Rows are a document's rows, each with its environment, by Each's
// walk: a row per measured result (one with a direction). command,
// title, labels and version are the document's.
func Rows(d Doc) ([]Row, []Env) {
	var rows []Row
	var envs []Env
	d.Each(func(at Locator, it Item) {
		r := it.Result
		if r == nil || len(r.Directions) == 0 {
			return
		}
		src, dst := it.Source, it.Destination
		if src == "" {
			src = r.Local.Hostname
			// The destination is the server the client addressed (the
			// host the user gave), never the name the server reports of
			// itself: with it a server could write into another
			// server's series. Its own name stays in the document kept
			// beside the row (remote.hostname).
			dst = hostOf(r.Remote.Address)
			if dst == "" {
				// A document that did not record the address.
				dst = r.Remote.Hostname
			}
		}
		row := RowOf(r, src, dst, it.MsgSize, it.Settings)
		row.At = at
		row.Command, row.Title, row.ToolVersion = d.Command(), d.Title(), d.Version()
		row.Labels = maps.Clone(d.Labels()) // scrubbed in place
		rows = append(rows, row)
		envs = append(envs, Env{Local: r.Local.Env.Fields(), Remote: r.Remote.Env.Fields()})
	})
	return rows, envs
}

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && !strings.HasSuffix(addr, "]") {
		addr = addr[:i]
	}
	return strings.Trim(addr, "[]")
}

// RowOf is the row of one result measured from src to dst at msgSize,
// with extra (a matrix row's settings, "via=relay") among its settings.
func RowOf(r *result.Result, src, dst string, msgSize int, extra string) Row {
	s := r.Summary
	row := Row{
		Started:     r.Started.UTC(),
		Test:        string(r.Spec.Kind),
		Source:      src,
		Destination: dst,
		MsgSize:     msgSize,
		Settings:    settingsOf(r.Spec, extra),
		Figures:     ValuesOf(Of(r)),
		Iterations:  1,
	}
	row.Series = SeriesKey(row.Source, row.Destination, row.Test, row.MsgSize, row.Settings)
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
	return row
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

// Filter selects results of the archive. Zero fields select
// everything.
type Filter struct {
	// Since and Until bound the results' start times (Until exclusive).
	Since, Until time.Time
	// Source and Destination match a result's hosts exactly.
	Source, Destination string
	// Test is a test kind (TCP_STREAM).
	Test string
	// Series is one series' key (SeriesKey).
	Series string
	// Labels must all be on the result's document with these values.
	Labels map[string]string
}

// Stored is a document as the archive keeps it: a results document or
// a mesh round, as its JSON.
type Stored struct {
	ID   int64
	Kind string // "result" or "mesh"
	// Started is the earliest result's start.
	Started time.Time
	JSON    []byte
}

// Counts is how much an archive holds.
type Counts struct {
	Documents, Results int64
}
