package testkit

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the driver the archive uses
)

// PostgresEnv names the environment variable that gives the PostgreSQL
// tests a server: the URL of a user that may create databases, with its
// password (.ci/run starts a cluster and sets it). Without it, Postgres
// starts a cluster of its own from Debian's postgresql package.
const PostgresEnv = "WIRESPEED_TEST_POSTGRES"

var pg struct {
	once sync.Once
	url  string // the admin URL, empty when none
	skip string // why there is none
	stop func()
}

// Postgres returns the URL of a new, empty PostgreSQL database for the
// test, dropped when it ends. The server is the one PostgresEnv names,
// or else a cluster this process starts (initdb and pg_ctl of Debian's
// postgresql package, as the postgres user when run as root) on a free
// port of 127.0.0.1 with password authentication, stopped by
// StopPostgres. It skips the test, naming the package, when there is
// neither.
func Postgres(t testing.TB) string {
	t.Helper()
	pg.once.Do(startPostgres)
	if pg.url == "" {
		t.Skip(pg.skip)
	}
	db, err := sql.Open("pgx", pg.url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := "ws_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", pg.url)
		if err != nil {
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, _ := url.Parse(pg.url)
	u.Path = "/" + name
	return u.String()
}

// StopPostgres stops the cluster Postgres started, if it started one. A
// package whose tests call Postgres calls it from TestMain.
func StopPostgres() {
	if pg.stop != nil {
		pg.stop()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// postgresBin finds the newest installed PostgreSQL's binaries.
func postgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[j]))))
		return vi > vj
	})
	if len(dirs) == 0 {
		return ""
	}
	return filepath.Dir(dirs[0])
}

func startPostgres() {
	if u := os.Getenv(PostgresEnv); u != "" {
		pg.url = u
		return
	}
	bin := postgresBin()
	if bin == "" {
		pg.skip = "PostgreSQL tests need Debian's postgresql package (apt-get install postgresql), or " + PostgresEnv + "=postgres://USER:PASSWORD@HOST/DB of a user that may create databases"
		return
	}
	// As root, the cluster runs as the postgres user the package made
	// (PostgreSQL refuses to run as root).
	var run func(name string, args ...string) *exec.Cmd
	owner := -1
	group := -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			pg.skip = "PostgreSQL tests as root need the postgres user of Debian's postgresql package: " + err.Error()
			return
		}
		owner, _ = strconv.Atoi(u.Uid)
		group, _ = strconv.Atoi(u.Gid)
		run = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
	} else {
		run = exec.Command
	}
	dir, err := os.MkdirTemp("", "wirespeed-pg-")
	if err != nil {
		pg.skip = "PostgreSQL tests: " + err.Error()
		return
	}
	fail := func(what string, err error, out []byte) {
		pg.skip = fmt.Sprintf("PostgreSQL tests: %s: %v: %s", what, err, strings.TrimSpace(string(out)))
		os.RemoveAll(dir)
	}
	if owner >= 0 {
		os.Chown(dir, owner, group)
	}
	password := randomHex(12)
	pwfile := filepath.Join(dir, "pw")
	os.WriteFile(pwfile, []byte(password+"\n"), 0o600)
	if owner >= 0 {
		os.Chown(pwfile, owner, group)
	}
	data := filepath.Join(dir, "data")
	if out, err := run(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		fail("initdb", err, out)
		return
	}
	port := freePort()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories=%s -c fsync=off -c max_connections=200", port, dir)
	if out, err := run(filepath.Join(bin, "pg_ctl"), "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		fail("pg_ctl start", err, append(out, log...))
		return
	}
	pg.url = fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", password, port)
	pg.stop = func() {
		run(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop").Run()
		os.RemoveAll(dir)
	}
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 55432
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
