package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"wirespeed/internal/sysinfo"
)

// runMain runs the command line and returns its exit status and output.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := Main(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestEnvJSONLoopback(t *testing.T) {
	code, out, stderr := runMain(t, "env", "--peer", "127.0.0.1", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var env sysinfo.Env
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("stdout is not a JSON record: %v\n%s", err, out)
	}
	if env.Interface == nil || env.Interface.Name != "lo" || env.Peer != "127.0.0.1" || env.KernelRelease == "" {
		t.Errorf("record: %+v", env)
	}
}

func TestEnvText(t *testing.T) {
	code, out, stderr := runMain(t, "env", "--dev", "lo", "--features")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kernel", "interface lo", "mtu", "offloads", "rx-checksumming:", "kernel features", "rx-gro:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestEnvErrors(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		inStderr string
	}{
		{[]string{"env", "--dev", "wst-nosuch0"}, ExitRuntime, `"wst-nosuch0" does not exist`},
		{[]string{"env", "--dev", "lo", "--peer", "127.0.0.1"}, ExitUsage, "give one"},
		{[]string{"env", "--peer", "not an address!"}, ExitUsage, "neither an address"},
		{[]string{"env", "extra"}, ExitUsage, "takes no arguments"},
		{[]string{"env", "--bogus"}, ExitUsage, "unknown flag"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, tt.code, tt.inStderr)
		}
	}
}
