package cli

import (
	"bytes"
	"context"
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

// TestArchivePasswordNotPrinted: with the archive's password in each
// place a target holds one (the URL's userinfo, its query's password=
// and sslpassword=, a libpq key/value string), a run whose archive is
// down prints it nowhere on stderr, writes it in no spool file, and
// makes no file named with it; a malformed target's usage error hides
// it too.
func TestArchivePasswordNotPrinted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // no PostgreSQL there
	const pw = "S3cretPW"
	for _, target := range []string{
		fmt.Sprintf("postgres://ws:%s@127.0.0.1:%d/ws?sslmode=disable", pw, port),
		fmt.Sprintf("postgres://127.0.0.1:%d/ws?user=postgres&password=%s&sslmode=disable", port, pw),
		fmt.Sprintf("postgresql://127.0.0.1:%d/ws?user=postgres&sslpassword=%s&sslmode=disable", port, pw),
		fmt.Sprintf("host=127.0.0.1 port=%d user=ws password=%s dbname=ws sslmode=disable", port, pw),
		fmt.Sprintf("host=127.0.0.1 port=%d user=ws password='%s x' dbname=ws sslmode=disable", port, pw),
	} {
		dir := t.TempDir()
		t.Chdir(dir)
		spool := filepath.Join(t.TempDir(), "spool")
		t.Setenv(SpoolEnv, spool)
		code, out, errOut := execute(t, context.Background(), "run", "-l", "0.2", "-i", "0", "--archive", target)
		if code != ExitOK || !strings.Contains(errOut, "the result is kept in") {
			t.Fatalf("run --archive (down): exit %d: %s", code, errOut)
		}
		if strings.Contains(out+errOut, pw) {
			t.Errorf("run --archive %s printed the password:\n%s", target, errOut)
		}
		files := 0
		filepath.WalkDir(spool, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(pw)) || strings.Contains(p, pw) {
				t.Errorf("spool file %s holds the password", p)
			}
			return nil
		})
		if files < 2 {
			t.Errorf("%d files in the spool; want the document and TARGET", files)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("run --archive %s made %v in the current directory", target, entries)
		}
	}
	code, _, errOut := execute(t, context.Background(), "run", "-l", "0.2", "--archive", "postgres://127.0.0.1:x/ws?password="+pw)
	if code != ExitUsage || strings.Contains(errOut, pw) {
		t.Errorf("run --archive (malformed): exit %d: %s; want a usage error without the password", code, errOut)
	}
}

// TestDashboardStartLineHidesPassword: the dashboard's start-up line
// names its archive without the password the URL's query holds.
func TestDashboardStartLineHidesPassword(t *testing.T) {
	u, err := url.Parse(testkit.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := u.User.Password()
	if !ok || len(pw) < 4 {
		t.Skipf("the test database's URL has no password to hide: %s", u.Redacted())
	}
	// The password moves to the query, where the driver reads it too.
	q := u.Query()
	q.Set("password", pw)
	u.RawQuery = q.Encode()
	u.User = url.User(u.User.Username())
	ctx, cancel := context.WithCancel(context.Background())
	errOut := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"dashboard", "--listen", "127.0.0.1:0", "--archive", u.String()}, &bytes.Buffer{}, errOut)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "dashboard of") && time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("dashboard ended: exit %d: %s", code, errOut)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	<-done
	line := errOut.String()
	if !strings.Contains(line, "dashboard of postgres://") || !strings.Contains(line, "password=xxxxx") {
		t.Errorf("start-up line %q; want the archive named, its password hidden", line)
	}
	if strings.Contains(line, pw) {
		t.Errorf("start-up line shows the password: %s", line)
	}
}
