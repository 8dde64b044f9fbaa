package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
)

func TestLabUsageErrors(t *testing.T) {
	tests := []struct {
		args     []string
		inStderr string
	}{
		{[]string{"lab"}, "needs a subcommand"},
		{[]string{"lab", "up", "--rate", "fast"}, "--rate"},
		{[]string{"lab", "up", "--rate", "10"}, "8kbit or more"},
		{[]string{"lab", "up", "--features", "mtu=9000"}, "--mtu"},
		{[]string{"lab", "up", "--features", "tso"}, "NAME=VALUE"},
		{[]string{"lab", "up", "--name", "Bad Name"}, "--name"},
		{[]string{"lab", "up", "--ipv4", "10.77.0.0"}, "--ipv4"},
		{[]string{"lab", "exec", "--side", "a"}, "needs a command"},
		{[]string{"lab", "exec", "--", "true"}, "--side"},
		{[]string{"lab", "exec", "--side", "c", "--", "true"}, "use a or b"},
		{[]string{"lab", "down", "--name", "../x"}, "--name"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, ExitUsage, tt.inStderr)
		}
	}
}

// TestLabCommands makes a lab through the CLI, looks at it, runs a command
// in it and removes it.
func TestLabCommands(t *testing.T) {
	nstest.RequireRoot(t)
	name := fmt.Sprintf("c%d", os.Getpid())
	t.Cleanup(func() { lab.Remove(name) })

	code, out, stderr := runMain(t, "lab", "up", "--name", name, "--mtu", "9000", "--rate", "100mbit", "--features", "tso=off")
	if code != ExitOK {
		t.Fatalf("lab up: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "lab "+name+": mtu 9000, rate 100 Mbits/sec") || !strings.Contains(out, "tcp-segmentation-offload off") {
		t.Errorf("lab up printed:\n%s", out)
	}
	if code, _, stderr := runMain(t, "lab", "up", "--name", name); code != ExitRuntime || !strings.Contains(stderr, "already exists") {
		t.Errorf("second lab up: exit %d: %s", code, stderr)
	}

	code, out, _ = runMain(t, "lab", "status", "--name", name)
	if code != ExitOK || !strings.Contains(out, "wst-"+name+"-b") || !strings.Contains(out, "10.77.0.2") {
		t.Errorf("lab status: exit %d:\n%s", code, out)
	}

	// The command sees the namespace's interfaces, not the host's.
	code, out, stderr = runMain(t, "lab", "exec", "--name", name, "--side", "b", "--", "cat", "/proc/self/net/dev")
	if code != ExitOK || !strings.Contains(out, "wst-b:") {
		t.Errorf("lab exec: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	code, _, stderr = runMain(t, "lab", "exec", "--name", name, "--side", "a", "--", "sh", "-c", "exit 3")
	if code != ExitRuntime || !strings.Contains(stderr, "exit status 3") {
		t.Errorf("failing command: exit %d, stderr %q", code, stderr)
	}

	for i := 0; i < 2; i++ {
		if code, _, stderr := runMain(t, "lab", "down", "--name", name); code != ExitOK {
			t.Errorf("lab down #%d: exit %d: %s", i+1, code, stderr)
		}
	}
	if _, err := os.Stat("/run/netns/wst-" + name + "-a"); !os.IsNotExist(err) {
		t.Errorf("namespace still there after lab down: %v", err)
	}
	if code, _, stderr := runMain(t, "lab", "exec", "--name", name, "--side", "a", "--", "true"); code != ExitRuntime || !strings.Contains(stderr, "no such lab") {
		t.Errorf("exec in a removed lab: exit %d: %s", code, stderr)
	}
}

// TestLabDownAllOwnLabsOnly: lab down --all removes the labs this user
// made and leaves another user's, naming whose it is; status says so too.
// The owner records live in a temporary StateDir, so labs other processes
// on this machine made have no record here and are left alone as well.
func TestLabDownAllOwnLabsOnly(t *testing.T) {
	nstest.RequireRoot(t)
	old := lab.StateDir
	lab.StateDir = t.TempDir()
	t.Cleanup(func() { lab.StateDir = old })
	t.Setenv("SUDO_UID", "")
	mine, theirs := fmt.Sprintf("m%d", os.Getpid()), fmt.Sprintf("o%d", os.Getpid())
	t.Cleanup(func() { lab.Remove(mine); lab.Remove(theirs) })
	for i, n := range []string{mine, theirs} {
		if code, _, stderr := runMain(t, "lab", "up", "--name", n, "--server=false",
			"--ipv4", fmt.Sprintf("10.77.%d.0/24", 200+i), "--ipv6", fmt.Sprintf("fd00:77:%d::/64", 200+i)); code != ExitOK {
			t.Fatalf("lab up %s: exit %d: %s", n, code, stderr)
		}
	}
	// Make the second lab another user's, as that user's lab up would.
	rec := filepath.Join(lab.StateDir, theirs+".owner.json")
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatalf("lab up left no owner record: %v", err)
	}
	if !strings.Contains(string(b), `"uid": 0`) {
		t.Errorf("owner record of a lab root made: %s", b)
	}
	if err := os.WriteFile(rec, []byte(`{"uid": 4242, "user": "alice", "created": "2026-12-01T10:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runMain(t, "lab", "status")
	if code != ExitOK || !strings.Contains(out, "lab "+theirs+", made by alice (uid 4242): mtu 1500") {
		t.Errorf("lab status: exit %d:\n%s", code, out)
	}
	code, out, stderr := runMain(t, "lab", "down", "--all")
	if code != ExitOK {
		t.Fatalf("lab down --all: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "lab "+mine+" is down") || strings.Contains(out, theirs) {
		t.Errorf("lab down --all printed:\n%s", out)
	}
	if !strings.Contains(stderr, "lab "+theirs+" left up: it is alice (uid 4242)'s") {
		t.Errorf("lab down --all does not say whose lab it left: %q", stderr)
	}
	// The kernel's view, not the command's: /run/netns holds the namespaces.
	for n, want := range map[string]bool{mine: false, theirs: true} {
		for _, s := range []string{"a", "b"} {
			_, err := os.Stat("/run/netns/wst-" + n + "-" + s)
			if (err == nil) != want {
				t.Errorf("namespace wst-%s-%s exists: %v, want %v", n, s, err == nil, want)
			}
		}
	}
	if code, out, stderr := runMain(t, "lab", "down", "--name", theirs); code != ExitOK || !strings.Contains(out, "is down") {
		t.Errorf("lab down --name %s: exit %d: %s", theirs, code, stderr)
	}
}
