package lab_test

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
)

// TestLabSurvivesIPNetnsAdd: a lab made before a later `ip netns add` can
// still be taken down. iproute2 bind-mounts /run/netns over itself when
// it finds it a plain directory, which hid every namespace mounted there
// before and left `lab down` failing with "device or resource busy"
// (seen on a machine where a test's `ip netns add` followed a lab). The
// test runs itself again in a private mount namespace with a fresh /run
// of its own, so the host's /run/netns is neither read nor changed.
func TestLabSurvivesIPNetnsAdd(t *testing.T) {
	if os.Getenv("WIRESPEED_NETNSDIR_CHILD") == "1" {
		netnsDirChild(t)
		return
	}
	nstest.RequireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip (Debian package iproute2)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*nstest.UpTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestLabSurvivesIPNetnsAdd$", "-test.v")
	cmd.Env = append(os.Environ(), "WIRESPEED_NETNSDIR_CHILD=1")
	// Go makes / private recursively in a child with a mount namespace
	// of its own, so nothing it mounts propagates back to this one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
}

func netnsDirChild(t *testing.T) {
	if err := unix.Mount("tmpfs", "/run", "tmpfs", 0, "size=4m"); err != nil {
		t.Fatalf("fresh /run: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), nstest.UpTimeout)
	defer cancel()
	l, err := lab.Up(ctx, lab.Config{Name: "nsdir"})
	if err != nil {
		t.Fatal(err)
	}
	ip := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	ip("netns", "add", "wst-nsdir-x")
	// Both lab hosts must still be reachable by name, and removable.
	for _, s := range []lab.HostName{lab.A, lab.B} {
		var st unix.Statfs_t
		path := "/run/netns/" + lab.Namespace("nsdir", s)
		if err := unix.Statfs(path, &st); err != nil || st.Type != unix.NSFS_MAGIC {
			t.Errorf("%s after ip netns add: not a mounted namespace (statfs type %#x, %v)", path, st.Type, err)
		}
	}
	if err := l.Down(); err != nil {
		t.Errorf("lab down after ip netns add: %v", err)
	}
	ip("netns", "del", "wst-nsdir-x")
}
