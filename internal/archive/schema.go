package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNewerSchema is wrapped by Open's error when the archive was written
// by a newer wirespeed, with a schema this one does not know: it is
// never written to then, so that the newer one's data stay whole.
var ErrNewerSchema = errors.New("written by a newer wirespeed")

// A migration takes the schema from its index (0: an empty database) to
// the next version. {{ID}}, {{BLOB}} and {{REAL}} are the dialect's
// column types. Migrations are only ever appended: an archive records
// its version (wirespeed_meta) and Open runs those it lacks, in one
// transaction, under a lock that keeps two processes from migrating at
// once.
var migrations = []string{
	// 1: the documents, the environments they refer to, a row per result.
	`CREATE TABLE documents (
		id {{ID}},
		sha256 TEXT NOT NULL UNIQUE,
		kind TEXT NOT NULL,
		started_us BIGINT NOT NULL,
		added_us BIGINT NOT NULL,
		body {{BLOB}} NOT NULL
	);
	CREATE TABLE envs (
		id {{ID}},
		sha256 TEXT NOT NULL UNIQUE,
		body TEXT NOT NULL
	);
	CREATE TABLE results (
		id {{ID}},
		document_id BIGINT NOT NULL,
		path TEXT NOT NULL,
		started_us BIGINT NOT NULL,
		command TEXT NOT NULL,
		test TEXT NOT NULL,
		source TEXT NOT NULL,
		destination TEXT NOT NULL,
		msg_size BIGINT NOT NULL,
		settings TEXT NOT NULL,
		series TEXT NOT NULL,
		throughput_bps {{REAL}} NOT NULL,
		latency_p50_us {{REAL}},
		latency_p90_us {{REAL}},
		latency_p99_us {{REAL}},
		loss_pct {{REAL}},
		local_cpu_pct {{REAL}},
		remote_cpu_pct {{REAL}},
		local_sd {{REAL}},
		remote_sd {{REAL}},
		ci_lo {{REAL}},
		ci_hi {{REAL}},
		iterations INTEGER NOT NULL,
		iter_bps TEXT NOT NULL,
		iter_p50 TEXT NOT NULL,
		limit_kind TEXT NOT NULL,
		title TEXT NOT NULL,
		labels TEXT NOT NULL,
		tool_version TEXT NOT NULL,
		env_id BIGINT NOT NULL,
		UNIQUE (document_id, path)
	)`,
	// 2: the indexes of history's queries (a series over time, a time
	// range, a pair's tests) and of prune (documents by time).
	`CREATE INDEX results_series ON results (series, started_us);
	CREATE INDEX results_started ON results (started_us);
	CREATE INDEX results_pair ON results (source, destination, test);
	CREATE INDEX documents_started ON documents (started_us)`,
	// 3: a stream test's TCP round-trip time (Row.RTTMicros); the rows
	// archived before it have none.
	`ALTER TABLE results ADD COLUMN rtt_us {{REAL}}`,
	// 4: every figure of the result, by the registry's names
	// (record.Figures), as a JSON object. Rows archived before it keep
	// their figures in the columns above (legacy in rows.go); rows
	// archived after leave those empty, throughput_bps aside.
	`ALTER TABLE results ADD COLUMN figures TEXT`,
}

// SchemaVersion is the schema version this wirespeed writes.
var SchemaVersion = len(migrations)

// dialect is what differs between the back ends.
type dialect struct {
	id, blob, real string
	// lock takes the migration lock inside a transaction (SQLite's
	// transactions take the write lock as they begin).
	lock string
	// tables lists the tables that make a database without wirespeed's
	// version record another program's (foreign).
	tables  string
	explain func(Target, error) error
}

func (d dialect) ddl(s string) []string {
	s = strings.NewReplacer("{{ID}}", d.id, "{{BLOB}}", d.blob, "{{REAL}}", d.real).Replace(s)
	var out []string
	for _, stmt := range strings.Split(s, ";") {
		if strings.TrimSpace(stmt) != "" {
			out = append(out, stmt)
		}
	}
	return out
}

// version reads the archive's schema version; 0 for a new database.
func version(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM wirespeed_meta WHERE key = 'schema_version'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("schema_version %q is not a number: the database is not a wirespeed archive, or it was damaged", v)
	}
	return n, nil
}

// ErrForeign is wrapped by Open's error when the database holds tables
// that are not a wirespeed archive's, so that wirespeed does not write
// its own into another program's database.
var ErrForeign = errors.New("holds tables that are not a wirespeed archive's")

// foreign fails when a database without wirespeed's version record
// holds tables wirespeed would not own: any table at all in a SQLite
// file (a file given by mistake: a browser's history, another tool's
// store), and in a PostgreSQL database, which may be shared, tables of
// the names wirespeed's migrations create.
func (a *Archive) foreign(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, a.dialect.tables)
	if err != nil {
		return err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return err
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	if a.target.Backend == SQLite {
		return fmt.Errorf("%w (%s) and no wirespeed schema: it is another program's SQLite database; give --archive a file of wirespeed's own (a new one is made)", ErrForeign, strings.Join(names, ", "))
	}
	return fmt.Errorf("%w (%s) and no wirespeed schema: give wirespeed a database of its own, or a schema of its own (search_path in the URL's options)", ErrForeign, strings.Join(names, ", "))
}

// migrate brings the schema to version want (tests stop short of the
// latest to test a migration).
func (a *Archive) migrate(ctx context.Context, want int) error {
	// An archive at this version (every open but a new archive's first)
	// is read, not locked: the migration's write transaction (a DDL
	// statement and a commit) was half of what a run's put cost.
	if have, err := version(ctx, a.db); err == nil && have == want {
		return nil
	}
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if a.dialect.lock != "" {
		if _, err := tx.ExecContext(ctx, a.dialect.lock); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS wirespeed_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
		return err
	}
	have, err := version(ctx, tx)
	if err != nil {
		return err
	}
	if have == 0 {
		if err := a.foreign(ctx, tx); err != nil {
			return err
		}
	}
	if have > len(migrations) {
		return fmt.Errorf("%w (schema %d; this wirespeed knows up to %d): upgrade wirespeed to use it, or give another archive", ErrNewerSchema, have, len(migrations))
	}
	if have >= want {
		return tx.Commit()
	}
	for v := have; v < want; v++ {
		for _, stmt := range a.dialect.ddl(migrations[v]) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate the archive to schema %d: %w", v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO wirespeed_meta (key, value) VALUES ('schema_version', $1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(want)); err != nil {
		return err
	}
	return tx.Commit()
}
