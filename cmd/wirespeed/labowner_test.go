//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
)

// TestLabStatusUnprivileged: a user without root cannot enter a lab's
// namespaces; lab status says so and whose the lab is, instead of
// calling it broken.
func TestLabStatusUnprivileged(t *testing.T) {
	nstest.RequireRoot(t)
	name := fmt.Sprintf("u%d", os.Getpid())
	t.Cleanup(func() { lab.Remove(name) })
	if out, err := wirespeed("lab", "up", "--name", name, "--server=false").CombinedOutput(); err != nil {
		t.Fatalf("lab up: %v: %s", err, out)
	}
	// A copy of this binary that user nobody may run.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	bin := filepath.Join(dir, "wirespeed")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(dst, src)
	src.Close()
	dst.Close()

	cmd := wirespeed("lab", "status", "--name", "")
	cmd.Path, cmd.Args[0] = bin, bin
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lab status as nobody: %v: %s", err, out)
	}
	want := "lab " + name + ", made by root (uid 0): not shown: reading it needs root"
	if !strings.Contains(string(out), want) {
		t.Errorf("lab status as nobody:\n%s\nwant a line with %q", out, want)
	}
	if strings.Contains(string(out), "lab "+name+", made by root (uid 0): broken") {
		t.Errorf("an unreadable lab is called broken:\n%s", out)
	}
}
