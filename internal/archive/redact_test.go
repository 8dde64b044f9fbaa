package archive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/testkit"
)

// TestRedact: a password in each place a target can hold one is hidden,
// and what names the archive (host, database, user) is kept.
func TestRedact(t *testing.T) {
	for _, tc := range []struct {
		in     string
		secret string
		keep   []string
	}{
		{"postgres://ws:S3cretPW@db.example:5432/wirespeed", "S3cretPW", []string{"ws:", "db.example:5432/wirespeed"}},
		{"postgres://db.example:15432/ws?user=postgres&password=S3cretPW&sslmode=disable", "S3cretPW", []string{"db.example:15432/ws", "user=postgres", "sslmode=disable"}},
		{"postgres://db.example/ws?sslmode=verify-full&sslpassword=S3cretPW", "S3cretPW", []string{"db.example/ws", "sslmode=verify-full"}},
		{"postgresql://db.example/ws?PassWord=S3cretPW", "S3cretPW", []string{"db.example/ws"}},
		// pgx unescapes the query's keys: pass%77ord is password.
		{"postgres://db.example/ws?pass%77ord=S3cretPW", "S3cretPW", []string{"db.example/ws"}},
		{"postgres://ws:S3cretPW@db.example/ws?password=Other2PW", "Other2PW", []string{"db.example/ws"}},
		{"host=db.example port=5432 user=ws password=S3cretPW dbname=wirespeed", "S3cretPW", []string{"host=db.example", "dbname=wirespeed", "user=ws"}},
		{"host=db.example password = 'S3cret PW with \\' quote' dbname=wirespeed", "S3cret PW", []string{"host=db.example", "dbname=wirespeed"}},
		{"host=db.example sslpassword=S3cretPW dbname=wirespeed", "S3cretPW", []string{"dbname=wirespeed"}},
		{"password=S3cretPW host=db.example", "S3cretPW", []string{"host=db.example"}},
		// URLs that do not parse.
		{"postgres://ws:S3cretPW@[::1/wirespeed", "S3cretPW", []string{"postgres://ws:"}},
		{"postgres://db.example:x/ws?password=S3cretPW", "S3cretPW", []string{"postgres://db.example"}},
		{"postgress://ws:S3cretPW@db.example/x", "S3cretPW", []string{"db.example/x"}},
	} {
		got := Redact(tc.in)
		if strings.Contains(got, tc.secret) || strings.Contains(got, "S3cret") {
			t.Errorf("Redact(%q) = %q: the password shows", tc.in, got)
		}
		for _, k := range tc.keep {
			if !strings.Contains(got, k) {
				t.Errorf("Redact(%q) = %q: lost %q", tc.in, got, k)
			}
		}
	}
	for _, s := range []string{"results.db", "/var/lib/wirespeed/a.db", "postgres://db.example/ws?sslmode=disable"} {
		if got := Redact(s); got != s {
			t.Errorf("Redact(%q) = %q; want it as it is", s, got)
		}
	}
}

// TestTargetPasswordHidden: with a password in each place a target holds
// one, the target's name, the spool's TARGET file and what it lists, and
// the errors of an archive that cannot be opened never show it; a libpq
// key/value string is a PostgreSQL target, never a file named with the
// password.
func TestTargetPasswordHidden(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there
	const pw = "S3cretPW"
	for _, s := range []string{
		fmt.Sprintf("postgres://ws:%s@127.0.0.1:%d/ws?sslmode=disable", pw, port),
		fmt.Sprintf("postgres://127.0.0.1:%d/ws?user=postgres&password=%s&sslmode=disable", port, pw),
		fmt.Sprintf("postgres://127.0.0.1:%d/ws?user=postgres&sslpassword=%s&sslmode=disable", port, pw),
		fmt.Sprintf("postgres://127.0.0.1:%d/ws?user=postgres&password=%s&sslmode=bogus", port, pw),
		fmt.Sprintf("host=127.0.0.1 port=%d user=ws password=%s dbname=ws sslmode=disable", port, pw),
		fmt.Sprintf("host=127.0.0.1 port=%d user=ws password='%s and more' dbname=ws sslmode=disable", port, pw),
		fmt.Sprintf("host=127.0.0.1 port=%d user=ws password=%s dbname=ws sslmode=bogus", port, pw),
	} {
		dir := t.TempDir()
		t.Chdir(dir)
		target, err := ParseTarget(s)
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", Redact(s), err)
		}
		if target.Backend != Postgres {
			t.Errorf("%q is a %s target; want postgres", Redact(s), target.Backend)
		}
		check := func(what, text string) {
			t.Helper()
			if strings.Contains(text, pw) {
				t.Errorf("%s shows the password: %s", what, text)
			}
		}
		check("String", target.String())
		check("%v", fmt.Sprintf("%v %s", target, &target))
		spool := Spool{Dir: filepath.Join(dir, "spool")}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		k, err := spool.Keep(ctx, target, docOf(synth(0, 1e9)))
		cancel()
		if err != nil || k.ArchiveErr == nil || k.Spooled == "" {
			t.Fatalf("keep in %s: %+v, %v; want the archive's error and the document spooled", target, k, err)
		}
		check("the archive's error", k.ArchiveErr.Error())
		b, err := os.ReadFile(filepath.Join(filepath.Dir(k.Spooled), "TARGET"))
		if err != nil {
			t.Fatal(err)
		}
		check("the spool's TARGET file", string(b))
		waiting, _ := spool.Waiting()
		check("the spool's list", fmt.Sprint(waiting))
		// Nothing but the spool was written: no SQLite file of the
		// string's name.
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() != "spool" {
				t.Errorf("%s made %s in the current directory", Redact(s), e.Name())
			}
		}
		_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error {
			check("a file's name", p)
			return nil
		})
	}
}

// TestHideDriverError: an error that quotes the connection string, as a
// driver's might, loses the target's passwords, and errors.Is still sees
// what it wraps.
func TestHideDriverError(t *testing.T) {
	target, err := ParseTarget("host=db.example password='a b c' sslpassword=K3y9 dbname=ws")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := ParseTarget("postgres://ws:P%40ss@db.example/ws?password=Q1x2")
	for _, tc := range []struct {
		target  Target
		secrets []string
	}{{target, []string{"a b c", "K3y9"}}, {u, []string{"P@ss", "Q1x2"}}} {
		inner := fmt.Errorf("dial: %w", fs.ErrNotExist)
		err := tc.target.hide(fmt.Errorf("cannot use %q: %w", strings.Join(tc.secrets, " and "), inner))
		for _, s := range tc.secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("hide: %v shows %q", err, s)
			}
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("hide: %v no longer wraps fs.ErrNotExist", err)
		}
	}
	// A short password is hidden where a connection string holds it,
	// and the other words are left whole.
	short, _ := ParseTarget("postgres://ws:ab@db.example/ws")
	err = short.hide(errors.New("table abc: cannot use postgres://ws:ab@db.example/ws or host=db.example password=ab"))
	if want := "table abc: cannot use postgres://ws:xxxxx@db.example/ws or host=db.example password=xxxxx"; err.Error() != want {
		t.Errorf("hide: %q; want %q", err, want)
	}
}

// TestQueryErrorHidesPassword: the error of a read on an archive that
// went away (what the dashboard's pages show) names the archive without
// the password its URL's query holds.
func TestQueryErrorHidesPassword(t *testing.T) {
	u, err := url.Parse(testkit.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := u.User.Password()
	if !ok || len(pw) < 4 {
		t.Skipf("the test database's URL has no password to hide: %s", u.Redacted())
	}
	q := u.Query()
	q.Set("password", pw)
	u.RawQuery = q.Encode()
	u.User = url.User(u.User.Username())
	target, err := ParseTarget(u.String())
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	a.db.Close() // the database goes away
	_, err = a.Results(context.Background(), Filter{})
	if err == nil || !strings.Contains(err.Error(), "password=xxxxx") || strings.Contains(err.Error(), pw) {
		t.Errorf("read of a closed archive: %v; want the archive named without its password", err)
	}
}

// TestSpoolOldTargetFile: a spool's TARGET file an older wirespeed wrote
// with the password in the URL's query is listed without it, and
// written again without it by the next document spooled there.
func TestSpoolOldTargetFile(t *testing.T) {
	const raw = "postgres://127.0.0.1:1/ws?user=postgres&password=S3cretPW"
	target, err := ParseTarget(raw)
	if err != nil {
		t.Fatal(err)
	}
	spool := Spool{Dir: t.TempDir()}
	dir := spool.dir(target)
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "TARGET"), []byte(raw+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "1-ab.json"), []byte("{}"), 0o600)
	if w, _ := spool.Waiting(); strings.Contains(fmt.Sprint(w), "S3cretPW") || w[target.String()] != 1 {
		t.Errorf("waiting %v; want 1 for %s, without the password", w, target)
	}
	if _, err := spool.Save(target, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "TARGET"))
	fi, _ := os.Stat(filepath.Join(dir, "TARGET"))
	if string(b) != target.String()+"\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("TARGET holds %q, mode %v; want %q, 0600", b, fi.Mode().Perm(), target.String())
	}
}
