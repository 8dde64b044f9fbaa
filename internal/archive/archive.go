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
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"wirespeed/internal/peertext"
	"wirespeed/internal/record"
	"wirespeed/internal/result"
)

// Backend is the kind of database an archive lives in.
type Backend string

// The back ends.
const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Target is where an archive is: a file path (SQLite), or a postgres://
// URL or libpq key/value string (PostgreSQL). It is shown, everywhere,
// by String: without its passwords (Redact).
type Target struct {
	Backend Backend
	// Path is the SQLite file; URL the PostgreSQL connection URL, or
	// DSN its libpq key/value string (host=... dbname=...), one of the
	// two.
	Path string
	URL  *url.URL
	DSN  string
	// MustExist makes Open fail with an error that is
	// fs.ErrNotExist, naming the path, rather than create a SQLite
	// file that is not there: for the commands that only read.
	MustExist bool
}

// libpqKV is the start of a libpq key/value connection string: a
// keyword and its '='. A file path that starts so is written ./NAME.
var libpqKV = regexp.MustCompile(`^\s*[A-Za-z_]+\s*=`)

// ParseTarget reads an --archive value: a postgres:// (or postgresql://)
// URL, a libpq key/value string (host=HOST dbname=DB ...), or else a
// file path for SQLite. Another URL scheme is refused, so that a typo
// such as "postgress://" does not become a file of that name; a
// key/value string was once taken as a file name, password included.
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
	if libpqKV.MatchString(s) {
		return Target{Backend: Postgres, DSN: s}, nil
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

// String names the target for people: the path, or the URL or
// key/value string without its passwords (Redact).
func (t Target) String() string {
	switch {
	case t.Backend != Postgres:
		return t.Path
	case t.URL != nil:
		return redactURL(t.URL)
	}
	return Redact(t.DSN)
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
		return nil, target.hide(err)
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

// explain wraps a database error with what the user can do about it,
// without the target's passwords.
func (a *Archive) explain(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrForeign) {
		return a.target.hide(fmt.Errorf("archive %s: %w", a.target, err))
	}
	return a.target.hide(a.dialect.explain(a.target, err))
}

// Added says what Put did with a document.
type Added struct {
	// New is false when the archive already held the document (the
	// same bytes, by their SHA-256): nothing was written.
	New bool
	// Results is how many result rows the document has.
	Results int
}

// Document is a document the archive keeps (record.Stored).
type Document = record.Stored

// parse reads one document's JSON: a results document or a mesh round
// of this schema version. The error says which it is not.
func parse(b []byte) (kind string, rows []extracted, err error) {
	d, err := record.Decode(b)
	if err != nil {
		return "", nil, err
	}
	return docRows(d)
}

// scrubbed escapes the strings of rows as a peer's are: a document may
// come from anyone, and history and the dashboard print what its rows
// and environments hold. The rows are what the archive keeps apart from
// the document (kept as it came), so they are what is scrubbed: the
// whole document's walk was a sixth of a put's CPU time.
func scrubbed(rows []extracted) []extracted {
	for i := range rows {
		peertext.Scrub(&rows[i].Row)
		peertext.Scrub(&rows[i].env)
	}
	return rows
}

// Prepared is a document made ready for the archive: checked, its rows
// and environments extracted, its digest taken and its body compressed.
// Prepare does all of a put's work that needs no database, so that a
// write transaction holds its locks only for the writes.
type Prepared struct {
	kind, sum string
	started   int64
	body      []byte // gzip of the compact JSON
	rows      []extracted
	// envKey is each row's environment's digest; envs each distinct
	// environment's JSON by its digest.
	envKey []string
	envs   map[string]string
}

// Results is how many result rows the document has.
func (p *Prepared) Results() int { return len(p.rows) }

// Prepare readies one document given as its JSON (a results document or
// a mesh round) for PutPrepared. Its error wraps ErrNotResult when the
// JSON is not such a document.
func Prepare(b []byte) (*Prepared, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, fmt.Errorf("not JSON: %v: %w", err, ErrNotResult)
	}
	b = compact.Bytes()
	kind, rows, err := parse(b)
	if err != nil {
		return nil, err
	}
	return prepared(kind, b, rows), nil
}

// PrepareDocument readies a document a command holds without decoding
// its JSON again: its rows are taken from the value, and its JSON is
// json.Marshal's (compact, so the digest is Prepare's of the same
// document). Decoding a run's document was two thirds of archiving it.
// It returns the JSON too, for a caller to spool.
func PrepareDocument(d record.Doc) (*Prepared, []byte, error) {
	var b []byte
	var err error
	var v any = d.Results
	if d.Mesh != nil {
		v = d.Mesh
	}
	if b, err = json.Marshal(v); err != nil {
		if ferr := result.CheckFinite(v); ferr != nil {
			err = fmt.Errorf("the document cannot be archived: %w", ferr) // names the figure
		}
		return nil, nil, err
	}
	kind, rows, err := docRows(d)
	if err != nil {
		return nil, b, err
	}
	return prepared(kind, b, rows), b, nil
}

// docRows are a document's rows, scrubbed, and its kind ("result" or
// "mesh"). A document of another schema holds none.
func docRows(d record.Doc) (string, []extracted, error) {
	want, kind := result.Schema, "result"
	if d.Mesh != nil {
		want, kind = result.MeshSchema, "mesh"
	} else if d.Results == nil {
		return "", nil, fmt.Errorf("no document: %w", ErrNotResult)
	}
	if d.Schema() != want {
		return "", nil, fmt.Errorf("schema %q: %w", d.Schema(), ErrNotResult)
	}
	rows, err := rowsOf(d)
	return kind, scrubbed(rows), err
}

// prepared digests and compresses a document's compact JSON b, with its
// rows.
func prepared(kind string, b []byte, rows []extracted) *Prepared {
	// The same document written indented (-o) and compact (--archive)
	// has one digest: it is the compact form's.
	sum := sha256.Sum256(b)
	p := &Prepared{kind: kind, sum: hex.EncodeToString(sum[:]), body: gz(b), rows: rows, envs: map[string]string{}}
	p.started = micros(rows[0].Started)
	for _, r := range rows {
		p.started = min(p.started, micros(r.Started))
		eb, _ := json.Marshal(r.env)
		es := sha256.Sum256(eb)
		key := hex.EncodeToString(es[:])
		p.envKey = append(p.envKey, key)
		p.envs[key] = string(eb)
	}
	return p
}

// PutJSON archives one document given as its JSON: a results document
// or a mesh round. A document already in the archive (the same bytes)
// is not written again, so that importing a file twice, or a spool
// flushed by two processes at once, adds it once.
func (a *Archive) PutJSON(ctx context.Context, b []byte) (Added, error) {
	p, err := Prepare(b)
	if err != nil {
		return Added{}, err
	}
	added, err := a.PutPrepared(ctx, []*Prepared{p})
	if err != nil {
		return Added{}, err
	}
	return added[0], nil
}

// Put archives a results document.
func (a *Archive) Put(ctx context.Context, doc result.Document) (Added, error) {
	return a.PutDoc(ctx, record.Doc{Results: &doc})
}

// PutMesh archives a mesh round.
func (a *Archive) PutMesh(ctx context.Context, doc result.MeshDocument) (Added, error) {
	return a.PutDoc(ctx, record.Doc{Mesh: &doc})
}

// PutDoc archives a document a command holds.
func (a *Archive) PutDoc(ctx context.Context, doc record.Doc) (Added, error) {
	p, _, err := PrepareDocument(doc)
	if err != nil {
		return Added{}, err
	}
	added, err := a.PutPrepared(ctx, []*Prepared{p})
	if err != nil {
		return Added{}, err
	}
	return added[0], nil
}

// PutMany archives several documents (as their JSON) in one
// transaction, as PutPrepared does; it returns how many were new. A
// document that is not one fails the whole call, naming it.
func (a *Archive) PutMany(ctx context.Context, docs [][]byte) (int, error) {
	ps := make([]*Prepared, len(docs))
	for i, b := range docs {
		p, err := Prepare(b)
		if err != nil {
			return 0, fmt.Errorf("document %d: %w", i+1, err)
		}
		ps[i] = p
	}
	added, err := a.PutPrepared(ctx, ps)
	n := 0
	for _, ad := range added {
		if ad.New {
			n++
		}
	}
	return n, err
}

// BatchDocuments and BatchBytes bound a batch a caller collects for
// PutPrepared: at most this many documents, or this many bytes of their
// JSON. Past a few hundred documents a batch saves little more, and it
// holds the archive's write lock (SQLite) and its documents in memory.
const (
	BatchDocuments = 500
	BatchBytes     = 32 << 20
)

// PutPrepared archives documents in one transaction, all or none: what
// importing many files and flushing a spool want, a commit (and, on
// PostgreSQL, a round trip) for the batch instead of one a document.
// Added says of each document whether it was new. Several processes may
// put batches at once: the rows each batch locks (environments, then
// documents, each by digest) are taken in one order, so that two
// batches holding some of the same documents never deadlock.
func (a *Archive) PutPrepared(ctx context.Context, ps []*Prepared) ([]Added, error) {
	return a.putPrepared(ctx, ps, false)
}

// putPrepared is PutPrepared; durable makes the commit wait for the
// disk on SQLite too (see writeSQLite), for a caller that deletes the
// documents' other copy once they are archived.
func (a *Archive) putPrepared(ctx context.Context, ps []*Prepared, durable bool) ([]Added, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	b := newBatch(ps)
	var err error
	if a.target.Backend == Postgres {
		err = a.writePostgres(ctx, a.now(), b)
	} else {
		err = a.writeSQLite(ctx, a.now(), b, durable)
	}
	if err != nil {
		return nil, a.explain(err)
	}
	return b.added, nil
}

// batch is a put's documents in the order they are written, and their
// environments.
type batch struct {
	docs []*Prepared
	// order[i] is the index in docs of the i-th document by digest.
	order []int
	// envKeys are the distinct environments' digests, sorted; envs their
	// JSON.
	envKeys []string
	envs    map[string]string
	added   []Added
}

func newBatch(ps []*Prepared) *batch {
	b := &batch{docs: ps, envs: map[string]string{}, added: make([]Added, len(ps))}
	for i, p := range ps {
		b.order = append(b.order, i)
		b.added[i].Results = len(p.rows)
		for k, v := range p.envs {
			if _, ok := b.envs[k]; !ok {
				b.envs[k] = v
				b.envKeys = append(b.envKeys, k)
			}
		}
	}
	sort.Slice(b.order, func(i, j int) bool { return ps[b.order[i]].sum < ps[b.order[j]].sum })
	sort.Strings(b.envKeys)
	return b
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

func floats(v []float64) string {
	if len(v) == 0 {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func labelsJSON(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	b, _ := json.Marshal(l)
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
