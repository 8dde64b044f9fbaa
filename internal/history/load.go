package history

import (
	"context"
	"slices"

	"wirespeed/internal/record"
)

// Archive is what Load reads: the archive's results and the
// environments they refer to (archive.Archive is one).
type Archive interface {
	Results(ctx context.Context, f record.Filter) ([]record.Row, error)
	Envs(ctx context.Context, ids []int64) (map[int64]record.Env, error)
}

// Query says which series Load makes.
type Query struct {
	Filter record.Filter
	// Size, when set, keeps only the results at this message size.
	Size int
	// Figures are the figures followed, each series in each; none
	// follows each test's DefaultFigure.
	Figures []Figure
	// Latest keeps, of each source and destination, only the series
	// measured last (a pair measured at several sizes or settings).
	Latest bool
	// Options are FindChanges'.
	Options Options
}

// Load reads the results q selects, oldest first, makes their series
// (Build: for each figure of q, or for each test its default), reads the
// environments the series' points refer to, and finds each series'
// change points with what changed in the environment there
// (FindChanges). It returns the rows read too, and the environments.
func Load(ctx context.Context, a Archive, q Query) ([]Series, []record.Row, map[int64]record.Env, error) {
	rows, err := a.Results(ctx, q.Filter)
	if err != nil {
		return nil, nil, nil, err
	}
	if q.Size > 0 {
		rows = slices.DeleteFunc(rows, func(r record.Row) bool { return r.MsgSize != q.Size })
	}
	var series []Series
	if len(q.Figures) > 0 {
		for _, f := range q.Figures {
			series = append(series, Build(rows, f)...)
		}
	} else {
		// Each test's rows with its figure: a history of TCP_STREAM and
		// TCP_RR together follows throughput for one and latency for the
		// other.
		byFigure := map[string][]record.Row{}
		var order []Figure
		for _, r := range rows {
			f := DefaultFigure(r.Test)
			if _, ok := byFigure[f.Name]; !ok {
				order = append(order, f)
			}
			byFigure[f.Name] = append(byFigure[f.Name], r)
		}
		for _, f := range order {
			series = append(series, Build(byFigure[f.Name], f)...)
		}
	}
	if q.Latest {
		series = latest(series)
	}
	envs, err := a.Envs(ctx, EnvIDs(series))
	if err != nil {
		return nil, nil, nil, err
	}
	for i := range series {
		if err := series[i].FindChanges(q.Options, envs); err != nil {
			return nil, nil, nil, err
		}
	}
	return series, rows, envs, nil
}

// latest keeps of each source and destination the series whose newest
// point is the newest, in their order.
func latest(series []Series) []Series {
	type pair struct{ src, dst string }
	best := map[pair]int{}
	for i, s := range series {
		k := pair{s.Key.Source, s.Key.Destination}
		if b, ok := best[k]; !ok || last(s).Time.After(last(series[b]).Time) {
			best[k] = i
		}
	}
	var out []Series
	for i, s := range series {
		if best[pair{s.Key.Source, s.Key.Destination}] == i {
			out = append(out, s)
		}
	}
	return out
}

func last(s Series) Point { return s.Points[len(s.Points)-1] }
