// Package history turns archived results into series over time (the
// same source, destination, test, message size and settings), finds
// where each series changed (stats.Steps) and what changed in the
// environment there, and checks the newest points of a series for a
// regression. It computes only: no I/O, no clock; cli reads the archive
// and report prints.
package history

import (
	"slices"
	"time"

	"wirespeed/internal/record"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/sysinfo"
)

// Figure is a figure a history follows: the registry's (record).
type Figure = record.Figure

// Figures are the figures history follows (record.Followed), the
// throughput first.
var Figures = record.In(record.Followed)

// FigureNamed returns the figure of that name or label.
func FigureNamed(name string) (Figure, error) { return record.Named(name, record.Followed) }

// DefaultFigure is the figure of a test's history when none is asked:
// the p50 latency of request/response tests, the throughput of others.
func DefaultFigure(test string) Figure {
	if spec.Kind(test).RR() {
		return record.LatencyP50
	}
	return record.Throughput
}

// Panels are the figures a test's history is drawn with, a panel of
// one unit each, the test's DefaultFigure first: a TCP stream test's
// throughput and its round-trip time, an RRUL test's throughput and
// its latency under load, a request/response test's latency and
// throughput, UDP_STREAM's throughput and loss.
func Panels(test string) [][]Figure {
	latency := []Figure{record.LatencyP50, record.LatencyP90, record.LatencyP99}
	throughput := []Figure{record.Throughput}
	switch k := spec.Kind(test); {
	case k.RR():
		return [][]Figure{latency, throughput}
	case k == spec.RRUL:
		return [][]Figure{throughput, latency}
	case k == spec.UDPStream:
		return [][]Figure{throughput, {record.Loss}}
	}
	return [][]Figure{throughput, {record.RTT}}
}

// Key says what a series is.
type Key struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Test        string `json:"test"`
	MsgSize     int    `json:"msg_size"`
	// Settings are the spec's settings other than the defaults, and a
	// matrix row's ("parallel=4 tso=off"); "" for the defaults.
	Settings string `json:"settings"`
}

// Point is one result of a series.
type Point struct {
	Time  time.Time `json:"time"`
	Value float64   `json:"value"`
	// Lo and Hi bound the confidence interval of a figure that is a
	// mean over iterations: a throughput's as the result gives it (at
	// its run's level), a p50 latency's computed from its iterations'
	// (at spec.DefaultConfidenceLevel, -I's default).
	Lo         *float64 `json:"lo,omitempty"`
	Hi         *float64 `json:"hi,omitempty"`
	Iterations int      `json:"iterations"`
	Limit      string   `json:"limit,omitempty"`
	Title      string   `json:"title,omitempty"`
	// ResultID is the result's row in the archive.
	ResultID int64 `json:"result_id"`
	envID    int64
	samples  []float64
}

// EnvChange is an item of a side's environment that differs between
// two results.
type EnvChange struct {
	// Host is the side's host (the series' source for the client's
	// side, its destination for the server's); Side is "local" or
	// "remote".
	Host   string `json:"host"`
	Side   string `json:"side"`
	Name   string `json:"name"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Change is a change point of a series.
type Change struct {
	// Index is the first point after the change; Time its time.
	Index int       `json:"index"`
	Time  time.Time `json:"time"`
	// Before and After are the means of the segments on either side
	// (up to the neighbouring change points).
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	ChangePct float64 `json:"change_pct"`
	// P is how sure: the split's p-value (stats.Steps).
	P float64 `json:"p"`
	// Worse says the change is a regression for the figure.
	Worse bool `json:"worse"`
	// Env is what changed in the environment between the last result
	// before and the first after.
	Env []EnvChange `json:"env,omitempty"`
}

// EnvStep is what changed in the environment between two consecutive
// points of a series, whether or not the figure changed there.
type EnvStep struct {
	// Index is the first point with the new environment; Time its time.
	Index int         `json:"index"`
	Time  time.Time   `json:"time"`
	Env   []EnvChange `json:"env"`
}

// Series is the history of one series.
type Series struct {
	Key            Key      `json:"key"`
	Figure         string   `json:"figure"`
	Unit           string   `json:"unit"`
	HigherIsBetter bool     `json:"higher_is_better"`
	Points         []Point  `json:"points"`
	Changes        []Change `json:"changes"`
	// Sensitivity is how large a step FindChanges could have found.
	Sensitivity Sensitivity `json:"sensitivity"`
	// Steps are every change of the environment between consecutive
	// points (FindChanges), oldest first.
	Steps []EnvStep `json:"env_steps,omitempty"`
}

// Build groups rows (oldest first) into series for figure fig, in the
// order each series first appears; rows without the figure are left
// out, and so is a series left empty.
func Build(rows []record.Row, fig Figure) []Series {
	var out []*Series
	idx := map[string]int{}
	for _, r := range rows {
		v, ok := r.Figures.Get(fig)
		if !ok {
			continue
		}
		i, seen := idx[r.Series]
		if !seen {
			i = len(out)
			idx[r.Series] = i
			out = append(out, &Series{
				Key:    Key{Source: r.Source, Destination: r.Destination, Test: r.Test, MsgSize: r.MsgSize, Settings: r.Settings},
				Figure: fig.Label, Unit: fig.Unit, HigherIsBetter: fig.HigherIsBetter, Changes: []Change{},
			})
		}
		p := Point{Time: r.Started, Value: v, Iterations: r.Iterations, Limit: r.LimitKind, Title: r.Title, ResultID: r.ID, envID: r.EnvID}
		if fig.Name == record.Throughput.Name {
			p.Lo, p.Hi = r.CILo, r.CIHi
		}
		p.samples = r.Samples(fig)
		if p.Lo == nil && len(p.samples) >= 2 {
			if sum, err := stats.Summarize(p.samples, spec.DefaultConfidenceLevel); err == nil && sum.Computable() {
				p.Lo, p.Hi = &sum.Lo, &sum.Hi
			}
		}
		out[i].Points = append(out[i].Points, p)
	}
	res := make([]Series, len(out))
	for i, s := range out {
		res[i] = *s
	}
	return res
}

// EnvIDs lists the environments the series' points refer to.
func EnvIDs(series []Series) []int64 {
	var ids []int64
	for _, s := range series {
		for _, p := range s.Points {
			if !slices.Contains(ids, p.envID) {
				ids = append(ids, p.envID)
			}
		}
	}
	return ids
}

// Options are the parameters of FindChanges.
type Options struct {
	// Alpha is each change's significance level, the false-alarm rate
	// (stats.StepOptions).
	Alpha float64
	// Permutations per test of a segment of stats.PermuteFrom points or
	// more; 0 for stats' default.
	Permutations int
}

// FindChanges finds the series' change points over the points' values
// and their own spread (stats.Steps, steps.go) and how large a step it
// could have found (Sensitivity). envs are the environments
// of the points (archive.Archive.Envs of EnvIDs). It also lists every
// change of the environment between consecutive points (Steps).
func (s *Series) FindChanges(o Options, envs map[int64]record.Env) error {
	s.Steps = nil
	for i := 1; i < len(s.Points); i++ {
		a, b := s.Points[i-1].envID, s.Points[i].envID
		// Environments are stored once each: the same id is the same
		// environment.
		if a == b {
			continue
		}
		if env := EnvDiff(s.Key, envs[a], envs[b]); len(env) > 0 {
			s.Steps = append(s.Steps, EnvStep{Index: i, Time: s.Points[i].Time, Env: env})
		}
	}
	values := make([]float64, len(s.Points))
	for i, p := range s.Points {
		values[i] = p.Value
	}
	cps, err := s.steps(values, o)
	if err != nil {
		return err
	}
	s.Changes = []Change{}
	for k, cp := range cps {
		lo, hi := 0, len(values)
		if k > 0 {
			lo = cps[k-1].Index
		}
		if k+1 < len(cps) {
			hi = cps[k+1].Index
		}
		before, after := mean(values[lo:cp.Index]), mean(values[cp.Index:hi])
		c := Change{Index: cp.Index, Time: s.Points[cp.Index].Time, Before: before, After: after, P: cp.P}
		if before != 0 {
			c.ChangePct = 100 * (after - before) / before
		}
		c.Worse = (after < before) == s.HigherIsBetter
		c.Env = EnvDiff(s.Key, envs[s.Points[cp.Index-1].envID], envs[s.Points[cp.Index].envID])
		s.Changes = append(s.Changes, c)
	}
	return nil
}

func alphaOr(a float64) float64 {
	if a == 0 {
		return 0.05
	}
	return a
}

func mean(v []float64) float64 {
	var m float64
	for _, x := range v {
		m += x / float64(len(v))
	}
	return m
}

// EnvDiff lists the items of each side's environment that differ
// between a and b, the client's side first.
func EnvDiff(k Key, a, b record.Env) []EnvChange {
	var out []EnvChange
	diff := func(side, host string, fa, fb []sysinfo.EnvField) {
		mb := map[string]string{}
		for _, f := range fb {
			mb[f.Name] = f.Value
		}
		seen := map[string]bool{}
		for _, f := range fa {
			seen[f.Name] = true
			if v := mb[f.Name]; v != f.Value {
				out = append(out, EnvChange{Host: host, Side: side, Name: f.Name, Before: f.Value, After: v})
			}
		}
		for _, f := range fb {
			if !seen[f.Name] {
				out = append(out, EnvChange{Host: host, Side: side, Name: f.Name, After: f.Value})
			}
		}
	}
	if len(a.Local) > 0 && len(b.Local) > 0 {
		diff("local", k.Source, a.Local, b.Local)
	}
	if len(a.Remote) > 0 && len(b.Remote) > 0 {
		diff("remote", k.Destination, a.Remote, b.Remote)
	}
	return out
}
