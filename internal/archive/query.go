package archive

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"wirespeed/internal/record"
)

// Filter selects results (record.Filter).
type Filter = record.Filter

func where(f Filter) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(cond, fmt.Sprintf("$%d", len(args))))
	}
	if !f.Since.IsZero() {
		add("started_us >= %s", micros(f.Since))
	}
	if !f.Until.IsZero() {
		add("started_us < %s", micros(f.Until))
	}
	if f.Source != "" {
		add("source = %s", f.Source)
	}
	if f.Destination != "" {
		add("destination = %s", f.Destination)
	}
	if f.Test != "" {
		add("test = %s", f.Test)
	}
	if f.Series != "" {
		add("series = %s", f.Series)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// labelsMatch is the label filter, applied to rows read: labels are a
// document's free-form annotations, not indexed.
func labelsMatch(f Filter, r Row) bool {
	for k, v := range f.Labels {
		if r.Labels[k] != v {
			return false
		}
	}
	return true
}

const rowColumns = `id, document_id, path, started_us, command, test, source, destination, msg_size, settings, series,
	throughput_bps, latency_p50_us, latency_p90_us, latency_p99_us, loss_pct, local_cpu_pct, remote_cpu_pct,
	local_sd, remote_sd, ci_lo, ci_hi, iterations, iter_bps, iter_p50, limit_kind, title, labels, tool_version, env_id, rtt_us, figures`

// Results returns the results the filter selects, oldest first.
func (a *Archive) Results(ctx context.Context, f Filter) ([]Row, error) {
	where, args := where(f)
	rows, err := a.db.QueryContext(ctx, `SELECT `+rowColumns+` FROM results`+where+` ORDER BY started_us, id`, args...)
	if err != nil {
		return nil, a.explain(err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, a.explain(err)
		}
		if labelsMatch(f, r) {
			out = append(out, r)
		}
	}
	return out, a.explain(rows.Err())
}

// SeriesCount is a series and how many results it has.
type SeriesCount struct {
	Key     string
	Results int
}

// Series lists the series with results the filter selects (its Labels
// aside), by key.
func (a *Archive) Series(ctx context.Context, f Filter) ([]SeriesCount, error) {
	where, args := where(f)
	rows, err := a.db.QueryContext(ctx, `SELECT series, COUNT(*) FROM results`+where+` GROUP BY series ORDER BY series`, args...)
	if err != nil {
		return nil, a.explain(err)
	}
	defer rows.Close()
	var out []SeriesCount
	for rows.Next() {
		var s SeriesCount
		if err := rows.Scan(&s.Key, &s.Results); err != nil {
			return nil, a.explain(err)
		}
		out = append(out, s)
	}
	return out, a.explain(rows.Err())
}

func scanRow(rows *sql.Rows) (Row, error) {
	var r Row
	var started int64
	var old legacy
	var lo, hi sql.NullFloat64
	var path, iterBPS, iterP50, labels string
	var figures sql.NullString
	err := rows.Scan(&r.ID, &r.DocumentID, &path, &started, &r.Command, &r.Test, &r.Source, &r.Destination, &r.MsgSize,
		&r.Settings, &r.Series, &old.throughput, &old.p50, &old.p90, &old.p99, &old.loss, &old.lcpu, &old.rcpu, &old.lsd, &old.rsd, &lo, &hi,
		&r.Iterations, &iterBPS, &iterP50, &r.LimitKind, &r.Title, &labels, &r.ToolVersion, &r.EnvID, &old.rtt, &figures)
	if err != nil {
		return r, err
	}
	if r.At, err = record.ParseLocator(path); err != nil {
		return r, fmt.Errorf("result %d: %w", r.ID, err)
	}
	r.Started = time.UnixMicro(started).UTC()
	if lo.Valid && hi.Valid {
		r.CILo, r.CIHi = ptr(lo.Float64), ptr(hi.Float64)
	}
	if figures.String != "" {
		if err := json.Unmarshal([]byte(figures.String), &r.Figures); err != nil {
			return r, fmt.Errorf("result %d: figures: %w", r.ID, err)
		}
	} else {
		r.Figures = old.figures(r.Test)
	}
	if iterBPS != "" {
		json.Unmarshal([]byte(iterBPS), &r.IterThroughput)
	}
	if iterP50 != "" {
		json.Unmarshal([]byte(iterP50), &r.IterLatencyP50)
	}
	if labels != "" {
		json.Unmarshal([]byte(labels), &r.Labels)
	}
	return r, nil
}

func ptr(v float64) *float64 { return &v }

// Envs returns the environments of these ids.
func (a *Archive) Envs(ctx context.Context, ids []int64) (map[int64]Env, error) {
	out := map[int64]Env{}
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		var body string
		if err := a.db.QueryRowContext(ctx, `SELECT body FROM envs WHERE id = $1`, id).Scan(&body); err != nil {
			return nil, a.explain(fmt.Errorf("environment %d: %w", id, err))
		}
		var e Env
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			return nil, fmt.Errorf("archive %s: environment %d: %w", a.target, id, err)
		}
		out[id] = e
	}
	return out, nil
}

// Documents calls fn with each document the filter's time bounds select
// (its other fields aside), oldest first: what `archive export` writes.
func (a *Archive) Documents(ctx context.Context, since, until time.Time, fn func(Document) error) error {
	f := Filter{Since: since, Until: until}
	where, args := where(f)
	rows, err := a.db.QueryContext(ctx, `SELECT id, kind, started_us, body FROM documents`+where+` ORDER BY started_us, id`, args...)
	if err != nil {
		return a.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var d Document
		var started int64
		var body []byte
		if err := rows.Scan(&d.ID, &d.Kind, &started, &body); err != nil {
			return a.explain(err)
		}
		d.Started = time.UnixMicro(started).UTC()
		if d.JSON, err = gunzip(body); err != nil {
			return fmt.Errorf("archive %s: document %d: %w", a.target, d.ID, err)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return a.explain(rows.Err())
}

// Pruned says what Prune removed.
type Pruned struct {
	Documents, Results int64
}

// Prune removes the documents that started before cutoff, with their
// results.
func (a *Archive) Prune(ctx context.Context, cutoff time.Time) (Pruned, error) {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return Pruned{}, a.explain(err)
	}
	defer tx.Rollback()
	var p Pruned
	res, err := tx.ExecContext(ctx, `DELETE FROM results WHERE document_id IN (SELECT id FROM documents WHERE started_us < $1)`, micros(cutoff))
	if err != nil {
		return p, a.explain(err)
	}
	p.Results, _ = res.RowsAffected()
	res, err = tx.ExecContext(ctx, `DELETE FROM documents WHERE started_us < $1`, micros(cutoff))
	if err != nil {
		return p, a.explain(err)
	}
	p.Documents, _ = res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `DELETE FROM envs WHERE id NOT IN (SELECT DISTINCT env_id FROM results)`); err != nil {
		return p, a.explain(err)
	}
	return p, a.explain(tx.Commit())
}

// Counts is how much the archive holds (record.Counts).
type Counts = record.Counts

// Count counts the archive's documents and results.
func (a *Archive) Count(ctx context.Context) (Counts, error) {
	var c Counts
	err := a.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM documents), (SELECT COUNT(*) FROM results)`).Scan(&c.Documents, &c.Results)
	return c, a.explain(err)
}

// Document returns the document of that id, whole: the raw JSON behind
// a result (Row.DocumentID), as the dashboard shows it.
func (a *Archive) Document(ctx context.Context, id int64) (Document, error) {
	var d Document
	var started int64
	var body []byte
	err := a.db.QueryRowContext(ctx, `SELECT id, kind, started_us, body FROM documents WHERE id = $1`, id).Scan(&d.ID, &d.Kind, &started, &body)
	if err != nil {
		return d, a.explain(fmt.Errorf("document %d: %w", id, err))
	}
	d.Started = time.UnixMicro(started).UTC()
	if d.JSON, err = gunzip(body); err != nil {
		return d, fmt.Errorf("archive %s: document %d: %w", a.target, d.ID, err)
	}
	return d, nil
}

// Result returns the result row of that id.
func (a *Archive) Result(ctx context.Context, id int64) (Row, error) {
	rows, err := a.db.QueryContext(ctx, `SELECT `+rowColumns+` FROM results WHERE id = $1`, id)
	if err != nil {
		return Row{}, a.explain(err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return Row{}, a.explain(err)
		}
		return Row{}, fmt.Errorf("archive %s: no result %d", a.target, id)
	}
	r, err := scanRow(rows)
	return r, a.explain(err)
}
