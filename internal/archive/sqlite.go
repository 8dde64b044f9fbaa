package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"time"
	"wirespeed/internal/record"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// busyTimeout is how long a SQLite writer waits for another process's
// write transaction before giving up (and spooling).
const busyTimeout = 10 * time.Second

var sqliteDialect = dialect{
	id:      "INTEGER PRIMARY KEY",
	blob:    "BLOB",
	real:    "REAL",
	tables:  `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'wirespeed_meta' ORDER BY name`,
	explain: explainSQLite,
}

func openSQLite(t Target) (*Archive, error) {
	fi, err := os.Stat(t.Path)
	if err == nil && fi.IsDir() {
		return nil, fmt.Errorf("archive %s is a directory; give a file path such as %s/archive.db", t.Path, t.Path)
	}
	if t.MustExist && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("archive %s does not exist: check the path (an archive is made by the first run, sweep, matrix or mesh with --archive, or by archive import): %w", t.Path, fs.ErrNotExist)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// A new archive is its user's alone: SQLite would make the file
		// 0644 (less the umask), and its -wal and -shm files take the
		// main file's mode. Made empty here, 0600, it is a new database
		// to SQLite. Another process may make it first: then it is
		// theirs, as it is.
		f, err := os.OpenFile(t.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
		}
	}
	// WAL lets history read while a run writes; every transaction takes
	// the write lock as it begins (_txlock=immediate), so that two
	// writers queue on the busy timeout rather than fail on upgrading a
	// read lock; foreign keys are not used. With WAL, synchronous=NORMAL
	// commits without waiting for the disk: the archive stays whole
	// through any crash, and a crash of a process loses nothing
	// committed; a power loss or a kernel crash may lose the
	// transactions committed since a checkpoint last synced the log (the
	// newest results).
	// A spool's flush, which deletes its files once they are archived,
	// commits with synchronous=FULL instead (writeSQLite).
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+t.Path+"?"+q.Encode())
	if err != nil {
		return nil, explainSQLite(t, err)
	}
	if err := pingSQLite(db); err != nil {
		db.Close()
		return nil, explainSQLite(t, err)
	}
	return &Archive{db: db, target: t, dialect: sqliteDialect, now: time.Now}, nil
}

// pingSQLite opens the first connection, trying again while it fails on
// SQLITE_BUSY, for up to busyTimeout. Turning a new database's journal to
// WAL (the connection's journal_mode pragma) upgrades the connection's
// read of the file to a write, and SQLite refuses that upgrade at once,
// without its busy handler, while another connection writes: several
// processes archiving into a new file at once failed in a millisecond,
// one in some twenty rounds of six (TestOpenWhileAnotherHoldsTheNewFile).
// Once the file is in WAL mode, which it keeps, the pragma writes nothing.
func pingSQLite(db *sql.DB) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := db.Ping()
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().Add(wait).After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}

func explainSQLite(t Target, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("archive %s is not a SQLite database, or it is damaged (%v): move it aside and give --archive a new file", t, err)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("archive %s is locked by another process past %s (%v): try again later", t, busyTimeout, err)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("archive %s: the disk is full (%v): free space, then `wirespeed archive flush`", t, err)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			return fmt.Errorf("archive %s cannot be opened for writing (%v): check that its directory exists and is writable", t, err)
		}
	}
	return fmt.Errorf("archive %s: %w", t, err)
}

// The statements of a put on SQLite.
const (
	sqliteInsertDocument = `INSERT INTO documents (sha256, kind, started_us, added_us, body) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (sha256) DO NOTHING RETURNING id`
	sqliteSelectEnv = `SELECT id FROM envs WHERE sha256 = $1`
	sqliteInsertEnv = `INSERT INTO envs (sha256, body) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING`
	sqliteInsertRow = `INSERT INTO results (document_id, path, started_us, command, test, source, destination, msg_size,
		settings, series, throughput_bps, figures, ci_lo, ci_hi, iterations, iter_bps, iter_p50,
		limit_kind, title, labels, tool_version, env_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`
)

// writeSQLite writes a batch in one transaction, its statements
// prepared once per archive. SQLite has one writer at a time (the
// transaction takes the write lock as it begins), so the order of the
// writes is the batch's only for the ids. durable commits with
// synchronous=FULL, waiting for the log to reach the disk.
func (a *Archive) writeSQLite(ctx context.Context, now time.Time, b *batch, durable bool) error {
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if durable {
		if _, err := conn.ExecContext(ctx, `PRAGMA synchronous=FULL`); err != nil {
			return err
		}
		defer conn.ExecContext(context.Background(), `PRAGMA synchronous=NORMAL`)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := map[string]*sql.Stmt{}
	for _, q := range []string{sqliteInsertDocument, sqliteSelectEnv, sqliteInsertEnv, sqliteInsertRow} {
		if stmts[q], err = a.stmt(ctx, tx, q); err != nil {
			return err
		}
	}
	// Environments repeat: look first, insert only a new one (an upsert
	// would write the row every time).
	envIDs := map[string]int64{}
	for _, key := range b.envKeys {
		var id int64
		err := stmts[sqliteSelectEnv].QueryRowContext(ctx, key).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			if _, err := stmts[sqliteInsertEnv].ExecContext(ctx, key, b.envs[key]); err != nil {
				return err
			}
			err = stmts[sqliteSelectEnv].QueryRowContext(ctx, key).Scan(&id)
		}
		if err != nil {
			return err
		}
		envIDs[key] = id
	}
	for _, i := range b.order {
		p := b.docs[i]
		var docID int64
		err := stmts[sqliteInsertDocument].QueryRowContext(ctx, p.sum, p.kind, p.started, micros(now), p.body).Scan(&docID)
		if errors.Is(err, sql.ErrNoRows) {
			continue // already in the archive
		}
		if err != nil {
			return err
		}
		for j, r := range p.rows {
			bps, _ := r.Figures.Get(record.Throughput)
			if _, err := stmts[sqliteInsertRow].ExecContext(ctx, docID, r.At.String(), micros(r.Started), r.Command, r.Test, r.Source, r.Destination, r.MsgSize,
				r.Settings, r.Series, bps, figuresJSON(r.Figures), r.CILo, r.CIHi, r.Iterations,
				floats(r.IterThroughput), floats(r.IterLatencyP50), r.LimitKind, r.Title, labelsJSON(r.Labels), r.ToolVersion, envIDs[p.envKey[j]]); err != nil {
				return err
			}
		}
		b.added[i].New = true
	}
	return tx.Commit()
}
