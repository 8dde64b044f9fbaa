//go:build unix

package archive

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestFileModes: a new SQLite archive and the -wal and -shm files SQLite
// makes beside it are the user's alone (0600), under the usual umask
// that would make them 0644; so are the spool's files, in directories
// of mode 0700.
func TestFileModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	a := open(t, Target{Backend: SQLite, Path: path})
	if _, err := a.Put(ctx, synth(0, 1e9)); err != nil {
		t.Fatal(err)
	}
	// The -wal and -shm files are there while the archive is open.
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}

	spool := Spool{Dir: filepath.Join(t.TempDir(), "state", "spool")}
	file, err := spool.Save(Target{Backend: SQLite, Path: path}, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want fs.FileMode
	}{
		{file, 0o600},
		{filepath.Join(filepath.Dir(file), "TARGET"), 0o600},
		{filepath.Dir(file), 0o700 | fs.ModeDir},
		{spool.Dir, 0o700 | fs.ModeDir},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (fs.ModeDir | fs.ModePerm); got != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, got, c.want)
		}
	}
}

// TestDefaultSpoolDir: the spool is under XDG_STATE_HOME, else HOME;
// without either (HOME unset or /, as for a service) it is a directory
// of the user's own in the temporary directory, 0700, refused when it
// is a symbolic link or another user's, never a directory shared by
// every user.
func TestDefaultSpoolDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name string
		env  func(string) string
		want string
	}{
		{"xdg", env("XDG_STATE_HOME", "/state", "HOME", "/home/u"), "/state/wirespeed/spool"},
		{"home", env("HOME", "/home/u"), "/home/u/.local/state/wirespeed/spool"},
		{"relative xdg", env("XDG_STATE_HOME", "state", "HOME", "/home/u"), "/home/u/.local/state/wirespeed/spool"},
		{"no home", env(), filepath.Join(tmp, "wirespeed-spool-"+itoa(os.Getuid()))},
		{"home is /", env("HOME", "/"), filepath.Join(tmp, "wirespeed-spool-"+itoa(os.Getuid()))},
	} {
		got, err := DefaultSpoolDir(tc.env)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	mine := filepath.Join(tmp, "wirespeed-spool-"+itoa(os.Getuid()))
	fi, err := os.Lstat(mine)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v, %v; want a directory of mode 0700", mine, fi, err)
	}
	// One of mine, left open to others, is closed.
	os.Chmod(mine, 0o777)
	if _, err := DefaultSpoolDir(env()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(mine); fi.Mode().Perm() != 0o700 {
		t.Errorf("%s left mode %v; want 0700", mine, fi.Mode().Perm())
	}

	// Planted by someone else: a symbolic link, a file, another user's
	// directory.
	os.Remove(mine)
	os.Symlink(t.TempDir(), mine)
	if _, err := DefaultSpoolDir(env()); err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), "WIRESPEED_SPOOL") {
		t.Errorf("a symbolic link: %v; want it refused, naming WIRESPEED_SPOOL", err)
	}
	os.Remove(mine)
	os.WriteFile(mine, nil, 0o600)
	if _, err := DefaultSpoolDir(env()); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file: %v; want it refused", err)
	}
	os.Remove(mine)
	if os.Getuid() != 0 {
		t.Skip("making another user's directory needs root")
	}
	os.Mkdir(mine, 0o700)
	if err := os.Chown(mine, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := DefaultSpoolDir(env()); err == nil || !strings.Contains(err.Error(), "another user (uid 65534)") {
		t.Errorf("another user's directory: %v; want it refused", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
