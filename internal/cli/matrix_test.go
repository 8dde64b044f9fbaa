package cli

import (
	"context"
	"strings"
	"testing"
)

func TestMatrixUsageErrors(t *testing.T) {
	tests := []struct {
		args     []string
		inStderr string
	}{
		{[]string{"matrix", "--dev", "wst-x"}, "at least one --set"},
		{[]string{"matrix", "--set", "tso=on,off"}, "--dev IFACE"},
		{[]string{"matrix", "--dev", "wst-x", "--remote-netns", "wst-y", "--set", "tso=on,off"}, "give --remote-dev"},
		{[]string{"matrix", "--dev", "wst-x", "--set", "remote:tso=on,off"}, "give --remote-dev"},
		{[]string{"matrix", "--remote-dev", "wst-x", "--set", "local:tso=on,off"}, "give --dev"},
		{[]string{"matrix", "--dev", "wst-x", "--set", "tso=on,off", "--sizes", "64", "-m", "64"}, "drop -m"},
		{[]string{"matrix", "--dev", "wst-x", "--set", "tso=on,off", "--tradeoff"}, "--tradeoff"},
		{[]string{"matrix", "a", "b"}, "at most one"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, ExitUsage, tt.inStderr)
		}
	}
}

// TestMatrixRemoteRefused: against a server without --allow-netconf, a
// remote change is refused before anything changes, and the message says
// what the server needs, and no more.
func TestMatrixRemoteRefused(t *testing.T) {
	code, out, stderr := execute(t, context.Background(), "matrix", "--remote-dev", "lo", "--set", "mtu=65536", "-l", "0.2")
	if code != ExitRuntime || !strings.Contains(stderr, "--allow-netconf") || !strings.Contains(stderr, "authenticated") {
		t.Errorf("exit %d, stderr %q, stdout %q", code, stderr, out)
	}
	// Nothing changed, so nothing failed to be restored (issue 18).
	if strings.Contains(strings.ToLower(out+stderr), "restore failed") {
		t.Errorf("a refused matrix reports a failed restore:\nstdout %q\nstderr %q", out, stderr)
	}
}
