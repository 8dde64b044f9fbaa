// Package archive owns the archive of results: every result document a
// command writes (run, sweep, matrix, each mesh round), kept whole, with
// a row of indexed columns per measured result for the queries history
// makes. The archive is an embedded SQLite file (modernc.org/sqlite,
// pure Go: the binary stays one static binary) or a shared PostgreSQL
// database (jackc/pgx), with one schema, versioned and migrated on open
// (schema.go). What cannot be written is kept in a spool (spool.go) and
// written later, so that an archive that is down never loses a
// measurement.
package archive

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"wirespeed/internal/peertext"
	"wirespeed/internal/result"
)

// Backend is the kind of database an archive lives in.
type Backend string

// The back ends.
const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Target is where an archive is: a file path (SQLite) or a postgres://
// URL.
type Target struct {
	Backend Backend
	// Path is the SQLite file; URL the PostgreSQL connection URL.
	Path string
	URL  *url.URL
}

// ParseTarget reads an --archive value: a postgres:// (or postgresql://)
// URL, or else a file path for SQLite. Another URL scheme is refused, so
// that a typo such as "postgress://" does not become a file of that name.
func ParseTarget(s string) (Target, error) {
	if s == "" {
		return Target{}, errors.New("no archive given: pass --archive FILE or postgres://URL, or set WIRESPEED_ARCHIVE")
	}
	if i := strings.Index(s, "://"); i > 0 {
		scheme := strings.ToLower(s[:i])
		if scheme != "postgres" && scheme != "postgresql" {
			return Target{}, fmt.Errorf("archive %q: scheme %q is not one wirespeed writes to; give a file path (SQLite) or a postgres:// URL", Redact(s), scheme)
		}
		u, err := url.Parse(s)
		if err != nil {
			return Target{}, fmt.Errorf("archive %q is not a valid URL (%v); the form is postgres://USER:PASSWORD@HOST:PORT/DATABASE", Redact(s), unwrapURLError(err))
		}
		if u.Host == "" && u.Query().Get("host") == "" {
			return Target{}, fmt.Errorf("archive %q names no host; the form is postgres://USER:PASSWORD@HOST:PORT/DATABASE", Redact(s))
		}
		return Target{Backend: Postgres, URL: u}, nil
	}
	return Target{Backend: SQLite, Path: s}, nil
}

// unwrapURLError drops url.Error's repetition of the whole URL, which
// would print the password.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// String names the target for people: the path, or the URL without its
// password.
func (t Target) String() string {
	if t.Backend == Postgres {
		return t.URL.Redacted()
	}
	return t.Path
}

// Redact hides the password of a URL-like string that may not parse.
func Redact(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return s
	}
	cred := rest[:at]
	if c := strings.Index(cred, ":"); c >= 0 {
		cred = cred[:c] + ":xxxxx"
	}
	return s[:i+3] + cred + rest[at:]
}

// Archive is an open archive. It is safe for concurrent use, and several
// processes may write one archive at once (see docs/archive.md).
type Archive struct {
	db      *sql.DB
	target  Target
	dialect dialect
	now     func() time.Time

	// stmts are the statements of a put, prepared once: preparing them
	// for every document was a quarter of an insert's CPU time.
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// stmt returns q prepared for tx: the archive's prepared statement,
// bound to the transaction's connection.
func (a *Archive) stmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	a.mu.Lock()
	st, ok := a.stmts[q]
	if !ok {
		var err error
		if st, err = a.db.PrepareContext(ctx, q); err != nil {
			a.mu.Unlock()
			return nil, err
		}
		if a.stmts == nil {
			a.stmts = map[string]*sql.Stmt{}
		}
		a.stmts[q] = st
	}
	a.mu.Unlock()
	return tx.StmtContext(ctx, st), nil
}

// Open opens the archive at target, creating it (a SQLite file, or the
// tables in a PostgreSQL database) when it is new, and migrates its
// schema to this version. The errors say what is wrong and what to do:
// a file that is not a SQLite database, a wrong password, an archive
// written by a newer wirespeed (ErrNewerSchema).
func Open(ctx context.Context, target Target) (*Archive, error) {
	var a *Archive
	var err error
	switch target.Backend {
	case SQLite:
		a, err = openSQLite(target)
	case Postgres:
		a, err = openPostgres(ctx, target)
	default:
		return nil, fmt.Errorf("archive: unknown back end %q", target.Backend)
	}
	if err != nil {
		return nil, err
	}
	if err := a.migrate(ctx, len(migrations)); err != nil {
		a.db.Close()
		return nil, a.explain(err)
	}
	return a, nil
}

// Close closes the archive's connections.
func (a *Archive) Close() error {
	a.mu.Lock()
	for _, st := range a.stmts {
		st.Close()
	}
	a.stmts = nil
	a.mu.Unlock()
	return a.db.Close()
}

// Target is where the archive is.
func (a *Archive) Target() Target { return a.target }

// explain wraps a database error with what the user can do about it.
func (a *Archive) explain(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNewerSchema) {
		return fmt.Errorf("archive %s: %w", a.target, err)
	}
	return a.dialect.explain(a.target, err)
}

// Added says what Put did with a document.
type Added struct {
	// New is false when the archive already held the document (the
	// same bytes, by their SHA-256): nothing was written.
	New bool
	// Results is how many result rows the document has.
	Results int
}

// Document is a document the archive keeps: a results document or a
// mesh round, as its JSON.
type Document struct {
	ID   int64
	Kind string // "result" or "mesh"
	// Started is the earliest result's start.
	Started time.Time
	JSON    []byte
}

// Parse reads one document's JSON: a results document or a mesh round
// of this schema version. The error says which it is not.
func Parse(b []byte) (kind string, rows []extracted, err error) {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return "", nil, fmt.Errorf("not JSON: %v: %w", err, ErrNotResult)
	}
	switch head.Schema {
	case result.Schema:
		var doc result.Document
		if err := json.Unmarshal(b, &doc); err != nil {
			return "", nil, fmt.Errorf("%v: %w", err, ErrNotResult)
		}
		// A document may come from anyone, and history prints its
		// strings: they are escaped as a peer's are.
		peertext.Scrub(&doc)
		rows, err := rowsOf(&doc)
		return "result", rows, err
	case result.MeshSchema:
		var doc result.MeshDocument
		if err := json.Unmarshal(b, &doc); err != nil {
			return "", nil, fmt.Errorf("%v: %w", err, ErrNotResult)
		}
		peertext.Scrub(&doc)
		rows, err := rowsOfMesh(&doc)
		return "mesh", rows, err
	case "":
		return "", nil, fmt.Errorf("no \"schema\" field: %w", ErrNotResult)
	}
	return "", nil, fmt.Errorf("schema %q, this wirespeed archives %q and %q: %w", head.Schema, result.Schema, result.MeshSchema, ErrNotResult)
}

// PutJSON archives one document given as its JSON: a results document
// or a mesh round. A document already in the archive (the same bytes)
// is not written again, so that importing a file twice, or a spool
// flushed by two processes at once, adds it once.
func (a *Archive) PutJSON(ctx context.Context, b []byte) (Added, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return Added{}, fmt.Errorf("not JSON: %v: %w", err, ErrNotResult)
	}
	b = compact.Bytes()
	kind, rows, err := Parse(b)
	if err != nil {
		return Added{}, err
	}
	// The same document written indented (-o) and compact (--archive)
	// has one digest: it is the compact form's.
	sum := sha256.Sum256(b)
	added, err := a.put(ctx, kind, hex.EncodeToString(sum[:]), b, rows)
	return added, a.explain(err)
}

// Put archives a results document.
func (a *Archive) Put(ctx context.Context, doc result.Document) (Added, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return Added{}, err
	}
	return a.PutJSON(ctx, b)
}

// PutMesh archives a mesh round.
func (a *Archive) PutMesh(ctx context.Context, doc result.MeshDocument) (Added, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return Added{}, err
	}
	return a.PutJSON(ctx, b)
}

// gzipWriters are reused: a new writer clears a megabyte of state,
// which was most of an insert's CPU time.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	w.Reset(&buf)
	w.Write(b)
	w.Close()
	gzipWriters.Put(w)
	return buf.Bytes()
}

func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(r, result.MaxFileBytes))
}

func (a *Archive) put(ctx context.Context, kind, sum string, body []byte, rows []extracted) (Added, error) {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return Added{}, err
	}
	defer tx.Rollback()
	added, err := a.putTx(ctx, tx, a.now(), kind, sum, body, rows)
	if err != nil {
		return Added{}, err
	}
	return added, tx.Commit()
}

// PutMany archives several documents (as their JSON) in one
// transaction: what importing many files, or filling an archive for a
// benchmark, wants. A document that is not one fails the whole call.
func (a *Archive) PutMany(ctx context.Context, docs [][]byte) (int, error) {
	type parsed struct {
		kind, sum string
		body      []byte
		rows      []extracted
	}
	ps := make([]parsed, len(docs))
	for i, b := range docs {
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			return 0, fmt.Errorf("document %d: not JSON: %v: %w", i+1, err, ErrNotResult)
		}
		kind, rows, err := Parse(compact.Bytes())
		if err != nil {
			return 0, fmt.Errorf("document %d: %w", i+1, err)
		}
		sum := sha256.Sum256(compact.Bytes())
		ps[i] = parsed{kind, hex.EncodeToString(sum[:]), compact.Bytes(), rows}
	}
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, a.explain(err)
	}
	defer tx.Rollback()
	n := 0
	now := a.now()
	for _, p := range ps {
		added, err := a.putTx(ctx, tx, now, p.kind, p.sum, p.body, p.rows)
		if err != nil {
			return 0, a.explain(err)
		}
		if added.New {
			n++
		}
	}
	return n, a.explain(tx.Commit())
}

// The statements of a put.
const (
	insertDocument = `INSERT INTO documents (sha256, kind, started_us, added_us, body) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (sha256) DO NOTHING RETURNING id`
	selectEnv = `SELECT id FROM envs WHERE sha256 = $1`
	insertEnv = `INSERT INTO envs (sha256, body) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING`
	insertRow = `INSERT INTO results (document_id, path, started_us, command, test, source, destination, msg_size,
		settings, series, throughput_bps, latency_p50_us, latency_p90_us, latency_p99_us, loss_pct,
		local_cpu_pct, remote_cpu_pct, local_sd, remote_sd, ci_lo, ci_hi, iterations, iter_bps, iter_p50,
		limit_kind, title, labels, tool_version, env_id, rtt_us)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)`
)

func (a *Archive) putTx(ctx context.Context, tx *sql.Tx, now time.Time, kind, sum string, body []byte, rows []extracted) (Added, error) {
	started := rows[0].Started
	for _, r := range rows {
		if r.Started.Before(started) {
			started = r.Started
		}
	}
	st, err := a.stmt(ctx, tx, insertDocument)
	if err != nil {
		return Added{}, err
	}
	var docID int64
	err = st.QueryRowContext(ctx, sum, kind, micros(started), micros(now), gz(body)).Scan(&docID)
	if errors.Is(err, sql.ErrNoRows) {
		return Added{Results: len(rows)}, nil
	}
	if err != nil {
		return Added{}, err
	}
	sel, err := a.stmt(ctx, tx, selectEnv)
	if err != nil {
		return Added{}, err
	}
	ins, err := a.stmt(ctx, tx, insertRow)
	if err != nil {
		return Added{}, err
	}
	envIDs := map[string]int64{}
	for _, r := range rows {
		eb, _ := json.Marshal(r.env)
		es := sha256.Sum256(eb)
		key := hex.EncodeToString(es[:])
		id, ok := envIDs[key]
		if !ok {
			// Environments repeat: look first, insert only a new one (an
			// upsert would write, and lock, the row every time).
			err := sel.QueryRowContext(ctx, key).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				if _, err := tx.ExecContext(ctx, insertEnv, key, string(eb)); err != nil {
					return Added{}, err
				}
				err = sel.QueryRowContext(ctx, key).Scan(&id)
			}
			if err != nil {
				return Added{}, err
			}
			envIDs[key] = id
		}
		labels := ""
		if len(r.Labels) > 0 {
			b, _ := json.Marshal(r.Labels)
			labels = string(b)
		}
		if _, err := ins.ExecContext(ctx, docID, r.Path, micros(r.Started), r.Command, r.Test, r.Source, r.Destination, r.MsgSize,
			r.Settings, r.Series, r.ThroughputBPS, r.LatencyP50Micros, r.LatencyP90Micros, r.LatencyP99Micros, r.LossPct,
			r.LocalCPUPct, r.RemoteCPUPct, r.LocalServiceDemand, r.RemoteServiceDemand, r.CILo, r.CIHi, r.Iterations,
			floats(r.IterThroughput), floats(r.IterLatencyP50), r.LimitKind, r.Title, labels, r.ToolVersion, id, r.RTTMicros); err != nil {
			return Added{}, err
		}
	}
	return Added{New: true, Results: len(rows)}, nil
}

func floats(v []float64) string {
	if len(v) == 0 {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// ReadDocuments reads every document in r: one JSON document, or several
// one after another (what `archive export` writes). name is for errors.
func ReadDocuments(r io.Reader, name string) ([][]byte, error) {
	dec := json.NewDecoder(io.LimitReader(r, 4*result.MaxFileBytes))
	var out [][]byte
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, fmt.Errorf("%s: document %d: %v: %w", name, len(out)+1, err, ErrNotResult)
		}
		out = append(out, raw)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty: %w", name, ErrNotResult)
	}
	return out, nil
}

// ReadDocumentFile reads the documents of a file (see ReadDocuments).
func ReadDocumentFile(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadDocuments(f, filepath.Clean(path))
}
