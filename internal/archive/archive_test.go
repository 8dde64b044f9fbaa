package archive

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"wirespeed/internal/record"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.StopPostgres()
	os.Exit(code)
}

// backends runs fn against a new SQLite archive and a new PostgreSQL
// database (skipped without the postgresql package).
func backends(t *testing.T, fn func(t *testing.T, target Target)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, Target{Backend: SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	})
	t.Run("postgres", func(t *testing.T) {
		tg, err := ParseTarget(testkit.Postgres(t))
		if err != nil {
			t.Fatal(err)
		}
		fn(t, tg)
	})
}

func open(t *testing.T, target Target) *Archive {
	t.Helper()
	a, err := Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

var t0 = time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)

func synth(i int, bps float64) result.Document {
	return Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: bps, TSO: true}.Document()
}

func TestPutAndResults(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		ctx := context.Background()
		a := open(t, target)
		doc := Synthetic{Source: "A", Destination: "B", Started: t0, BitsPerSecond: 941e6, Iterations: []float64{940e6, 941e6, 942e6},
			TSO: true, Labels: map[string]string{"kernel": "patched"}}.Document()
		added, err := a.Put(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		if !added.New || added.Results != 1 {
			t.Fatalf("first put: %+v, want new with 1 result", added)
		}
		// The same document again, and indented as -o writes it: not
		// added twice.
		if added, err := a.Put(ctx, doc); err != nil || added.New {
			t.Fatalf("second put: %+v, %v; want not new", added, err)
		}
		b, _ := json.MarshalIndent(doc, "", "  ")
		if added, err := a.PutJSON(ctx, b); err != nil || added.New {
			t.Fatalf("indented put: %+v, %v; want not new", added, err)
		}
		rows, err := a.Results(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("%d rows, want 1", len(rows))
		}
		r := rows[0]
		want := Row{Command: "run", Test: "TCP_STREAM", Source: "A", Destination: "B", MsgSize: 131072,
			Settings: "", Figures: record.Values{record.Throughput.Name: 941e6}, Iterations: 3, LimitKind: "link", Title: "",
			ToolVersion: "synthetic"}
		if r.Command != want.Command || r.Test != want.Test || r.Source != want.Source || r.Destination != want.Destination ||
			r.MsgSize != want.MsgSize || r.Settings != want.Settings || r.Figures[record.Throughput.Name] != want.Figures[record.Throughput.Name] || r.At != want.At ||
			r.Iterations != want.Iterations || r.LimitKind != want.LimitKind || r.ToolVersion != want.ToolVersion {
			t.Errorf("row %+v,\nwant %+v", r, want)
		}
		if !r.Started.Equal(t0) {
			t.Errorf("started %v, want %v", r.Started, t0)
		}
		if fmt.Sprint(r.IterThroughput) != "[9.4e+08 9.41e+08 9.42e+08]" {
			t.Errorf("iterations %v", r.IterThroughput)
		}
		if r.Labels["kernel"] != "patched" {
			t.Errorf("labels %v", r.Labels)
		}
		if r.Series != "A|B|TCP_STREAM|131072|" {
			t.Errorf("series %q", r.Series)
		}
		envs, err := a.Envs(ctx, []int64{r.EnvID})
		if err != nil {
			t.Fatal(err)
		}
		var tso string
		for _, f := range envs[r.EnvID].Remote {
			if f.Name == "tso" {
				tso = f.Value
			}
		}
		if tso != "on" {
			t.Errorf("remote env %v: want tso on", envs[r.EnvID].Remote)
		}
		if rtt, p50 := fig(r, record.RTT), fig(r, record.LatencyP50); rtt != nil || p50 != nil {
			t.Errorf("a run without intervals or latency has RTT %v, p50 %v; want neither", rtt, p50)
		}
		if got, _ := a.Results(ctx, Filter{Labels: map[string]string{"kernel": "stock"}}); len(got) != 0 {
			t.Errorf("label filter kernel=stock selected %d rows", len(got))
		}
		if got, _ := a.Results(ctx, Filter{Since: t0.Add(time.Second)}); len(got) != 0 {
			t.Errorf("since filter selected %d rows", len(got))
		}
	})
}

// TestLatencyColumns: a stream test's RTT is the mean of its intervals'
// sender RTTs (those that have one), an RR test's percentiles its
// transaction times', an RRUL test's its loaded round trips', in
// microseconds.
func TestLatencyColumns(t *testing.T) {
	ctx := context.Background()
	a := open(t, Target{Backend: SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	stream := Synthetic{Source: "A", Destination: "B", Started: t0, BitsPerSecond: 1e9, RTTMicros: []float64{120, 0, 180, 150}}.Document()
	rr := Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Hour), BitsPerSecond: 1e5,
		Latency: &stats.Latency{Count: 1000, P50: 31, P90: 40, P99: 77}}.Document()
	rrul := Synthetic{Source: "A", Destination: "B", Started: t0.Add(2 * time.Hour), BitsPerSecond: 9e8}.Document()
	rrul.Spec.Kind, rrul.Result.Spec.Kind = spec.RRUL, spec.RRUL
	rrul.Result.Summary.UnderLoad = &result.UnderLoad{Loaded: result.Phase{All: result.Latency{P50Ms: 2.5, P90Ms: 4, P99Ms: 12.25, Samples: 200}}}
	for _, d := range []result.Document{stream, rr, rrul} {
		if _, err := a.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := a.Results(ctx, Filter{})
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v; want 3", len(rows), err)
	}
	show := func(p *float64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	for i, want := range []struct{ test, rtt, p50, p90, p99 string }{
		{"TCP_STREAM", "150", "nil", "nil", "nil"},
		{"TCP_RR", "nil", "31", "40", "77"},
		{"RRUL", "nil", "2500", "4000", "12250"},
	} {
		r := rows[i]
		got := []string{r.Test, show(fig(r, record.RTT)), show(fig(r, record.LatencyP50)), show(fig(r, record.LatencyP90)), show(fig(r, record.LatencyP99))}
		if fmt.Sprint(got) != fmt.Sprint([]string{want.test, want.rtt, want.p50, want.p90, want.p99}) {
			t.Errorf("row %d: test, rtt, p50, p90, p99 = %v, want %+v", i, got, want)
		}
	}
}

// TestConcurrentWriters: processes writing one archive at once (each
// its own connections, as separate runs are), the first of them creating
// it, lose nothing.
func TestConcurrentWriters(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		const writers, each = 6, 15
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := Open(context.Background(), target)
				if err != nil {
					errs <- err
					return
				}
				defer a.Close()
				for i := 0; i < each; i++ {
					if _, err := a.Put(context.Background(), synth(w*each+i, 1e9)); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		c, err := open(t, target).Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c.Documents != writers*each || c.Results != writers*each {
			t.Errorf("archive holds %+v, want %d of each", c, writers*each)
		}
	})
}

// TestMigration: an archive of schema 1 is brought to the latest on
// open, its results kept.
func TestMigration(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		ctx := context.Background()
		a := open(t, target)
		// Make a schema-1 archive: drop what is newer.
		for _, stmt := range []string{"DROP TABLE results", "DROP TABLE documents", "DROP TABLE envs", "DELETE FROM wirespeed_meta"} {
			if _, err := a.db.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.migrate(ctx, 1); err != nil {
			t.Fatal(err)
		}
		// A row as schema 1 had it (this wirespeed's insert names the
		// columns of later migrations).
		for _, stmt := range []string{
			`INSERT INTO documents (sha256, kind, started_us, added_us, body) VALUES ('x', 'run', 0, 0, '')`,
			`INSERT INTO envs (sha256, body) VALUES ('y', '{}')`,
			`INSERT INTO results (document_id, path, started_us, command, test, source, destination, msg_size, settings, series,
				throughput_bps, iterations, iter_bps, iter_p50, limit_kind, title, labels, tool_version, env_id)
				SELECT d.id, '', 0, 'run', 'TCP_STREAM', 'A', 'B', 131072, '', 'A|B|TCP_STREAM|131072|', 1e9, 1, '', '', '', '', '', 'old', e.id
				FROM documents d, envs e`,
		} {
			if _, err := a.db.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if v, _ := version(ctx, a.db); v != 1 {
			t.Fatalf("version %d, want 1", v)
		}
		b := open(t, target)
		if v, _ := version(ctx, b.db); v != SchemaVersion {
			t.Errorf("after open: version %d, want %d", v, SchemaVersion)
		}
		var q string
		if target.Backend == SQLite {
			q = `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'results_series'`
		} else {
			q = `SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'results_series'`
		}
		var n int
		if err := b.db.QueryRowContext(ctx, q).Scan(&n); err != nil || n != 1 {
			t.Errorf("index results_series: %d, %v; want it made by migration 2", n, err)
		}
		if rows, _ := b.Results(ctx, Filter{}); len(rows) != 1 || rows[0].Figures[record.Throughput.Name] != 1e9 || fig(rows[0], record.RTT) != nil {
			t.Errorf("rows after migration %+v, want the one of 1 Gbit/s, without an RTT", rows)
		}
		// Migration 3's column takes the RTTs of what is archived next.
		if _, err := b.Put(ctx, Synthetic{Source: "A", Destination: "B", Started: t0, BitsPerSecond: 1e9, RTTMicros: []float64{100, 300}}.Document()); err != nil {
			t.Fatal(err)
		}
		if rows, _ := b.Results(ctx, Filter{Since: t0}); len(rows) != 1 || fig(rows[0], record.RTT) == nil || *fig(rows[0], record.RTT) != 200 {
			t.Errorf("rows after migration and a put %+v, want one with an RTT of 200 us", rows)
		}
	})
}

func TestNewerSchema(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		ctx := context.Background()
		a := open(t, target)
		if _, err := a.db.ExecContext(ctx, `UPDATE wirespeed_meta SET value = '99' WHERE key = 'schema_version'`); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, target)
		if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "schema 99") || !strings.Contains(err.Error(), "upgrade wirespeed") {
			t.Errorf("open: %v; want ErrNewerSchema naming schema 99 and what to do", err)
		}
	})
}

// TestOpenWhileAnotherHoldsTheNewFile: a new archive file still in
// SQLite's rollback journal, in another process's write transaction, is
// opened once that writer is done: turning it to WAL upgrades the
// opening connection's read of the file to a write, which SQLite refuses
// at once rather than wait on its busy handler (six processes
// importing into a new archive at once failed with SQLITE_BUSY in about
// one round of twenty, within a second and "past 10s").
func TestOpenWhileAnotherHoldsTheNewFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// What another wirespeed's first connection makes of it: the table
	// of the schema's version, empty, in the default rollback journal.
	if _, err := conn.ExecContext(ctx, `CREATE TABLE wirespeed_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	// A write transaction, as the other's migration is, holds the file's
	// reserved lock until it ends.
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	const hold = 300 * time.Millisecond
	released := make(chan struct{})
	go func() {
		time.Sleep(hold)
		if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
			t.Error(err)
		}
		close(released)
	}()
	start := time.Now()
	a, err := Open(ctx, Target{Backend: SQLite, Path: path})
	took := time.Since(start)
	<-released
	if err != nil {
		t.Fatalf("open while another writes the new file: %v (after %v)", err, took)
	}
	defer a.Close()
	if took < hold-50*time.Millisecond {
		t.Errorf("open took %v, less than the other's hold of %v: it did not wait", took, hold)
	}
	var mode string
	if err := a.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q, %v; want wal", mode, err)
	}
	if _, err := a.Put(ctx, synth(1, 1e9)); err != nil {
		t.Errorf("put: %v", err)
	}
}

func TestCorruptSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	os.WriteFile(path, []byte(strings.Repeat("this is not a database\n", 400)), 0o644)
	_, err := Open(context.Background(), Target{Backend: SQLite, Path: path})
	if err == nil || !strings.Contains(err.Error(), "not a SQLite database") || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("open: %v; want a corrupt-file error saying what to do", err)
	}
	_, err = Open(context.Background(), Target{Backend: SQLite, Path: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("open a directory: %v", err)
	}
}

func TestWrongPassword(t *testing.T) {
	u, err := url.Parse(testkit.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "not-the-password")
	target, err := ParseTarget(u.String())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), target)
	if err == nil || !strings.Contains(err.Error(), "refused the login") || strings.Contains(err.Error(), "not-the-password") {
		t.Errorf("open: %v; want a login error without the password", err)
	}
}

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in      string
		backend Backend
		wantErr string
	}{
		{"results.db", SQLite, ""},
		{"/var/lib/wirespeed/a.db", SQLite, ""},
		{"postgres://ws:secret@db.example:5432/wirespeed", Postgres, ""},
		{"postgresql://ws@db.example/wirespeed?sslmode=require", Postgres, ""},
		{"postgress://ws:secret@db.example/wirespeed", "", `scheme "postgress"`},
		{"postgres://ws:secret@[::1/wirespeed", "", "not a valid URL"},
		{"postgres:///wirespeed", "", "names no host"},
		{"", "", "no archive given"},
	} {
		got, err := ParseTarget(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseTarget(%q): %v; want an error with %q and no password", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.Backend != tc.backend {
			t.Errorf("ParseTarget(%q) = %v, %v; want %s", tc.in, got, err, tc.backend)
		}
		if strings.Contains(got.String(), "secret") {
			t.Errorf("target %q prints its password", got)
		}
	}
}

func TestNotAResult(t *testing.T) {
	a := open(t, Target{Backend: SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	empty, _ := json.Marshal(result.Document{Schema: result.Schema, Command: "run"})
	emptyMesh, _ := json.Marshal(result.MeshDocument{Schema: result.MeshSchema, Command: "mesh",
		Pairs: []result.MeshPair{{Source: "A", Destination: "B", Error: "refused"}}})
	for _, tc := range []struct{ in, want string }{
		{`{"schema":"prometheus/v1"}`, `schema "prometheus/v1", this wirespeed archives`},
		{`{"schema":"wirespeed/result/v2","tool":{}}`, "a newer wirespeed wrote it?"},
		{`[1,2,3]`, "not a JSON object"},
		{`{"hello":1}`, `no "schema" field`},
		{`not json`, "not JSON"},
		{`{"schema":"wirespeed/result/v1","summary":"fast"}`, "cannot unmarshal"},
		{`{"schema":"wirespeed/result/v1","schema":"other"}`, `schema "other"`},
		{string(empty), "holds no measured result"},
		{string(emptyMesh), "no measured pair"},
	} {
		_, err := a.PutJSON(context.Background(), []byte(tc.in))
		if !errors.Is(err, ErrNotResult) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PutJSON(%.40q): %v; want ErrNotResult saying %q", tc.in, err, tc.want)
		}
	}
	if c, _ := a.Count(context.Background()); c.Documents != 0 {
		t.Errorf("archive holds %d documents, want 0", c.Documents)
	}
}

// TestSpool: a document the archive refuses is kept in the spool, and
// written by the next Keep once the archive takes it.
func TestSpool(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		ctx := context.Background()
		spool := Spool{Dir: t.TempDir()}
		bad := target
		if target.Backend == SQLite {
			os.WriteFile(target.Path, []byte(strings.Repeat("garbage", 1000)), 0o644)
		} else {
			u := *target.URL
			u.User = url.UserPassword(u.User.Username(), "wrong")
			bad.URL = &u
		}
		k, err := spool.Keep(ctx, bad, docOf(synth(0, 1e9)))
		if err != nil {
			t.Fatal(err)
		}
		if k.ArchiveErr == nil || k.Spooled == "" {
			t.Fatalf("keep into a broken archive: %+v; want spooled", k)
		}
		if _, err := os.Stat(k.Spooled); err != nil {
			t.Fatalf("spooled file: %v", err)
		}
		if w, _ := spool.Waiting(); w[target.String()] != 1 {
			t.Errorf("waiting %v, want 1 for %s", w, target)
		}
		if target.Backend == SQLite {
			os.Remove(target.Path)
		}
		k, err = spool.Keep(ctx, target, docOf(synth(1, 1e9)))
		if err != nil || k.ArchiveErr != nil {
			t.Fatalf("keep: %+v, %v", k, err)
		}
		if k.Flushed.Written != 1 || !k.Added.New {
			t.Errorf("keep: %+v; want the spooled document flushed and the new one added", k)
		}
		if c, _ := open(t, target).Count(ctx); c.Documents != 2 {
			t.Errorf("archive holds %d documents, want 2", c.Documents)
		}
		if p, _ := spool.Pending(target); len(p) != 0 {
			t.Errorf("spool still holds %v", p)
		}
	})
}

func TestPruneExportImport(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		ctx := context.Background()
		a := open(t, target)
		for i := 0; i < 10; i++ {
			if _, err := a.Put(ctx, synth(i*24, float64(i+1)*1e8)); err != nil {
				t.Fatal(err)
			}
		}
		var exported [][]byte
		if err := a.Documents(ctx, time.Time{}, time.Time{}, func(d Document) error {
			exported = append(exported, d.JSON)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(exported) != 10 {
			t.Fatalf("exported %d documents, want 10", len(exported))
		}
		p, err := a.Prune(ctx, t0.Add(5*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if p.Documents != 5 || p.Results != 5 {
			t.Errorf("pruned %+v, want 5 of each", p)
		}
		rows, _ := a.Results(ctx, Filter{})
		if len(rows) != 5 || rows[0].Figures[record.Throughput.Name] != 6e8 {
			t.Errorf("after prune: %d rows, first %v; want 5 from 6e8", len(rows), rows)
		}
		// Importing the export brings the pruned ones back, and only
		// them.
		var added int
		for _, b := range exported {
			ad, err := a.PutJSON(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if ad.New {
				added++
			}
		}
		if added != 5 {
			t.Errorf("import of the export added %d, want 5", added)
		}
	})
}

// TestForeignDatabase: a database that holds another program's tables
// and no wirespeed schema is refused, naming them, and nothing is
// written to it.
func TestForeignDatabase(t *testing.T) {
	backends(t, func(t *testing.T, target Target) {
		ctx := context.Background()
		var db *sql.DB
		var err error
		if target.Backend == SQLite {
			db, err = sql.Open("sqlite", target.Path)
		} else {
			db, err = sql.Open("pgx", target.URL.String())
		}
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		table := "moz_places"
		if target.Backend == Postgres {
			// A shared database may hold other programs' tables; one of a
			// name wirespeed's schema uses is refused.
			if _, err := db.ExecContext(ctx, `CREATE TABLE invoices (id INT)`); err != nil {
				t.Fatal(err)
			}
			table = "results"
		}
		if _, err := db.ExecContext(ctx, `CREATE TABLE `+table+` (id INT, url TEXT)`); err != nil {
			t.Fatal(err)
		}
		_, err = Open(ctx, target)
		if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), table) || !strings.Contains(err.Error(), "give") {
			t.Errorf("open: %v; want ErrForeign naming %s and what to do", err, table)
		}
		var n int
		q := `SELECT COUNT(*) FROM sqlite_master WHERE name = 'wirespeed_meta'`
		if target.Backend == Postgres {
			q = `SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'wirespeed_meta'`
		}
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil || n != 0 {
			t.Errorf("wirespeed_meta tables after the refusal: %d, %v; want none written", n, err)
		}
		if target.Backend == Postgres {
			// Other programs' tables alone are no reason to refuse.
			if _, err := db.ExecContext(ctx, `DROP TABLE results`); err != nil {
				t.Fatal(err)
			}
			if a, err := Open(ctx, target); err != nil {
				t.Errorf("open beside another program's table: %v", err)
			} else {
				a.Close()
			}
		}
	})
}

// TestDamagedSQLite: an archive whose pages were overwritten past its
// schema (a disk's damage, not a wrong file) fails with the damaged-file
// error and what to do, at open or at the first read, and never panics.
func TestDamagedSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	a := open(t, Target{Backend: SQLite, Path: path})
	for i := range 300 {
		if _, err := a.Put(ctx, synth(i, 1e9)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err = Open(ctx, Target{Backend: SQLite, Path: path})
	if err == nil {
		defer a.Close()
		_, err = a.Results(ctx, Filter{})
	}
	if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("a damaged archive: %v; want the damaged-file error saying what to do", err)
	}
}

// TestUnreachablePostgres: a URL the driver cannot use, and a server
// that is not there, each say what is wrong, without the password.
func TestUnreachablePostgres(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for _, tc := range []struct{ url, want string }{
		{"postgres://ws:secret@127.0.0.1:1/wirespeed?sslmode=bogus", "not a valid PostgreSQL URL"},
		{fmt.Sprintf("postgres://ws:secret@127.0.0.1:%d/wirespeed?sslmode=disable", port), "is PostgreSQL running there"},
	} {
		target, err := ParseTarget(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err = Open(ctx, target)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("open %s: %v; want %q without the password", Redact(tc.url), err, tc.want)
		}
	}
}

// TestScrub: the strings a document brings (its title and labels, the
// hosts, the environment) are kept escaped in the rows and
// environments history and the dashboard print, and the document itself
// as it came.
func TestScrub(t *testing.T) {
	ctx := context.Background()
	a := open(t, Target{Backend: SQLite, Path: filepath.Join(t.TempDir(), "a.db")})
	doc := Synthetic{Source: "A\x1b]0;owned\x07", Destination: "B", Started: t0, BitsPerSecond: 1e9,
		Labels: map[string]string{"k\u202e": "v\x1b[2J"}, Remote: func(e *sysinfo.Env) { e.KernelRelease = "6.8\r\nroot# " }}.Document()
	doc.Title = "t\x1b[31m"
	if _, err := a.Put(ctx, doc); err != nil {
		t.Fatal(err)
	}
	rows, err := a.Results(ctx, Filter{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	r := rows[0]
	if r.Title != `t\x1b[31m` || r.Source != `A\x1b]0;owned\x07` || r.Labels[`k\u202e`] != `v\x1b[2J` || !strings.HasPrefix(r.Series, `A\x1b]0;owned\x07|B|`) {
		t.Errorf("row title %q source %q labels %q series %q: want each escaped", r.Title, r.Source, r.Labels, r.Series)
	}
	envs, err := a.Envs(ctx, []int64{r.EnvID})
	if err != nil {
		t.Fatal(err)
	}
	var kernel string
	for _, f := range envs[r.EnvID].Remote {
		if f.Name == "kernel" {
			kernel = f.Value
		}
	}
	if kernel != `6.8\r\nroot# ` {
		t.Errorf("remote kernel %q, want it escaped", kernel)
	}
	d, err := a.Document(ctx, r.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	var back result.Document
	if err := json.Unmarshal(d.JSON, &back); err != nil || back.Title != doc.Title {
		t.Errorf("the archived document's title %q, %v; want it as it came, %q", back.Title, err, doc.Title)
	}
}

// fig is r's value of f, nil when r has none.
func fig(r Row, f record.Figure) *float64 {
	if v, ok := r.Figures.Get(f); ok {
		return &v
	}
	return nil
}

func docOf(d result.Document) record.Doc { return record.Doc{Results: &d} }
