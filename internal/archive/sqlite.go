package archive

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

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
	explain: explainSQLite,
}

func openSQLite(t Target) (*Archive, error) {
	if fi, err := os.Stat(t.Path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("archive %s is a directory; give a file path such as %s/archive.db", t.Path, t.Path)
	}
	// WAL lets history read while a run writes; every transaction takes
	// the write lock as it begins (_txlock=immediate), so that two
	// writers queue on the busy timeout rather than fail on upgrading a
	// read lock; foreign keys are not used.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+t.Path+"?"+q.Encode())
	if err != nil {
		return nil, explainSQLite(t, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, explainSQLite(t, err)
	}
	return &Archive{db: db, target: t, dialect: sqliteDialect, now: time.Now}, nil
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
