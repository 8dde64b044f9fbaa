package cli

import (
	"fmt"
	"os"
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
