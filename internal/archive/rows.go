package archive

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"wirespeed/internal/record"
	"wirespeed/internal/spec"
)

// Row and Env are the archive's row of a result and the environment it
// refers to: record's, so that what reads rows (history, the
// dashboard) needs no archive.
type (
	Row = record.Row
	Env = record.Env
)

// ErrNotResult is wrapped by the errors of documents that hold no
// result to archive.
var ErrNotResult = record.ErrNotDocument

// extracted is a row with the environment it refers to, before the
// archive gave either an id.
type extracted struct {
	Row
	env Env
}

// rowsOf is a document's rows, by record's walk. It fails on a
// document that holds no measured result.
func rowsOf(d record.Doc) ([]extracted, error) {
	rows, envs := record.Rows(d)
	out := make([]extracted, len(rows))
	for i := range rows {
		out[i] = extracted{Row: rows[i], env: envs[i]}
	}
	if len(out) == 0 {
		if d.Mesh != nil {
			return nil, fmt.Errorf("the mesh round has no measured pair: %w", ErrNotResult)
		}
		return nil, fmt.Errorf("the document holds no measured result: %w", ErrNotResult)
	}
	return out, nil
}

// figuresJSON is a row's figures column: every figure it has, by name.
func figuresJSON(v record.Values) string {
	if len(v) == 0 {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// legacy are the figure columns of schemas 1 to 3. A row archived
// before schema 4 has no figures column; its figures are read from
// these, by the names the registry gives them.
type legacy struct {
	throughput                           float64
	p50, p90, p99, loss, lcpu, rcpu, rtt sql.NullFloat64
	lsd, rsd                             sql.NullFloat64
}

func (l legacy) figures(test string) record.Values {
	v := record.Values{}
	if l.throughput > 0 {
		v[record.Throughput.Name] = l.throughput
	}
	set := func(f record.Figure, x sql.NullFloat64) {
		if x.Valid {
			v[f.Name] = x.Float64
		}
	}
	set(record.LatencyP50, l.p50)
	set(record.LatencyP90, l.p90)
	set(record.LatencyP99, l.p99)
	set(record.Loss, l.loss)
	set(record.LocalUtil, l.lcpu)
	set(record.RemoteUtil, l.rcpu)
	set(record.RTT, l.rtt)
	// local_sd and remote_sd held a request/response test's demand per
	// transaction, a stream test's per KB.
	if spec.Kind(test).RR() {
		set(record.LocalDemandTr, l.lsd)
		set(record.RemoteDemandTr, l.rsd)
	} else {
		set(record.LocalDemand, l.lsd)
		set(record.RemoteDemand, l.rsd)
	}
	return v
}
