//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
)

func TestLabClientArgs(t *testing.T) {
	l := &lab.Lab{Name: "x",
		A: lab.Host{Name: lab.A, Netns: "wst-x-a", Dev: "wst-a", IPv4: netip.MustParseAddr("10.77.0.1"), IPv6: netip.MustParseAddr("fd00:77::1")},
		B: lab.Host{Name: lab.B, Netns: "wst-x-b", Dev: "wst-b"},
	}
	srv := &lab.Server{Addr: "10.77.0.1:7575"}
	tests := []struct {
		sub   string
		flags []string
		want  []string
	}{
		{"run", []string{"-l", "1"}, []string{"run", "10.77.0.1:7575", "-l", "1"}},
		{"run", []string{"-6"}, []string{"run", "[fd00:77::1]:7575", "-6"}},
		{"matrix", []string{"--set", "tso=on,off"}, []string{"matrix", "10.77.0.1:7575", "--dev", "wst-b", "--remote-dev", "wst-a", "--remote-netns", "wst-x-a", "--set", "tso=on,off"}},
		{"matrix", []string{"--dev=wst-b", "--set", "tso=on,off"}, []string{"matrix", "10.77.0.1:7575", "--remote-dev", "wst-a", "--remote-netns", "wst-x-a", "--dev=wst-b", "--set", "tso=on,off"}},
		{"matrix", []string{"--remote-dev", "eth9", "--set", "tso=on,off"}, []string{"matrix", "10.77.0.1:7575", "--dev", "wst-b", "--remote-dev", "eth9", "--set", "tso=on,off"}},
		// What the flags set is the parser's to say, not a scan of the
		// strings: a value that looks like a flag sets nothing, -6 may
		// come among other short flags or as -6=false.
		{"matrix", []string{"-o", "--dev", "--set", "tso=on,off"}, []string{"matrix", "10.77.0.1:7575", "--dev", "wst-b", "--remote-dev", "wst-a", "--remote-netns", "wst-x-a", "-o", "--dev", "--set", "tso=on,off"}},
		{"run", []string{"-6P", "2"}, []string{"run", "[fd00:77::1]:7575", "-6P", "2"}},
		{"run", []string{"-6=false"}, []string{"run", "10.77.0.1:7575", "-6=false"}},
	}
	keyed := &lab.Server{Addr: "10.77.0.1:7575", Key: "/run/wirespeed/labs/x.key"}
	keyedTests := []struct {
		sub   string
		flags []string
		want  []string
	}{
		{"sweep", []string{"-l", "1"}, []string{"sweep", "10.77.0.1:7575", "--psk-file", "/run/wirespeed/labs/x.key", "-l", "1"}},
		{"run", []string{"--psk-file", "k"}, []string{"run", "10.77.0.1:7575", "--psk-file", "k"}},
		{"matrix", []string{"--set", "mtu=1500,9000"}, []string{"matrix", "10.77.0.1:7575", "--psk-file", "/run/wirespeed/labs/x.key", "--dev", "wst-b", "--remote-dev", "wst-a", "--set", "mtu=1500,9000"}},
	}
	for _, tt := range keyedTests {
		got, err := labClientArgs(&env{}, l, keyed, tt.sub, tt.flags)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("keyed server: %s %q (-want +got):\n%s", tt.sub, tt.flags, diff)
		}
	}
	// A flag the command does not have is a usage error here, before a
	// process starts in the lab.
	if _, err := labClientArgs(&env{}, l, srv, "run", []string{"--no-such"}); err == nil || !strings.Contains(err.Error(), "no-such") {
		t.Errorf("an unknown flag: %v", err)
	}
	for _, tt := range tests {
		got, err := labClientArgs(&env{}, l, srv, tt.sub, tt.flags)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tt.sub, tt.flags, diff)
		}
	}
}

func TestLabRunUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		inStderr string
	}{
		{[]string{"lab", "run", "serve", "--", "-l", "1"}, "not \"serve\""},
		{[]string{"lab", "run", "run", "sweep", "--", "-l", "1"}, "one command before --"},
		{[]string{"lab", "run", "--name", "Bad", "--", "-l", "1"}, "--name"},
	} {
		code, _, stderr := runMain(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, ExitUsage, tt.inStderr)
		}
	}
}

// TestLabServerAndRun: lab up starts a server in side a and records it;
// lab run runs a client in side b against it, and a matrix that changes
// both ends and leaves them as they were; lab down stops the server.
func TestLabServerAndRun(t *testing.T) {
	nstest.RequireRoot(t)
	name := fmt.Sprintf("r%d", os.Getpid())
	t.Cleanup(func() { lab.Remove(name) })

	code, out, stderr := runMain(t, "lab", "up", "--name", name, "--port", "7601")
	if code != ExitOK {
		t.Fatalf("lab up: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "server: wirespeed serve on 10.77.0.1:7601 in a") || !strings.Contains(out, "running") || !strings.Contains(out, "key:    "+lab.KeyPath(name)) {
		t.Errorf("lab up printed:\n%s", out)
	}
	srv, err := lab.LoadServer(name)
	if err != nil || srv == nil || !srv.Running(name) {
		t.Fatalf("recorded server %+v, err %v", srv, err)
	}

	code, out, stderr = runMain(t, "lab", "run", "--name", name, "--", "-l", "0.3", "-i", "0", "--json")
	if code != ExitOK {
		t.Fatalf("lab run: exit %d: %s", code, stderr)
	}
	var doc result.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("lab run --json: %v\n%s", err, out)
	}
	if doc.Summary.BitsPerSecond <= 0 || doc.Remote.Env == nil || doc.Remote.Env.Interface == nil || doc.Remote.Env.Interface.Name != "wst-a" ||
		doc.Local.Env == nil || doc.Local.Env.Interface == nil || doc.Local.Env.Interface.Name != "wst-b" {
		t.Errorf("lab run: throughput %v, envs local %+v remote %+v", doc.Summary.BitsPerSecond, doc.Local.Env, doc.Remote.Env)
		if doc.Summary.BitsPerSecond <= 0 {
			t.Logf("the document: %s", out)
			t.Logf("stderr: %s", stderr)
		}
	}

	// A sweep proves the lab's key too.
	code, out, stderr = runMain(t, "lab", "run", "--name", name, "sweep", "--", "--sizes", "1460", "-l", "0.2", "-i", "0")
	if code != ExitOK || !strings.Contains(out, "1460") {
		t.Errorf("lab run sweep: exit %d: %s\n%s", code, stderr, out)
	}

	code, _, stderr = runMain(t, "lab", "run", "--name", name, "run", "--", "-l", "oops")
	if code != ExitUsage {
		t.Errorf("lab run with a bad flag: exit %d, want %d: %s", code, ExitUsage, stderr)
	}

	code, out, stderr = runMain(t, "lab", "run", "--name", name, "matrix", "--", "--set", "mtu=1500,9000", "-l", "0.3", "-i", "0", "--settle", "0")
	if code != ExitOK {
		t.Fatalf("lab run matrix: exit %d: %s\n%s", code, stderr, out)
	}
	if !strings.Contains(out, "wst-b (local) and wst-a (remote, by the server)") || !strings.Contains(out, "restored wst-b and wst-a") {
		t.Errorf("lab run matrix printed:\n%s", out)
	}
	if l, err := lab.Load(name); err != nil || l.MTU != 1500 {
		t.Errorf("after the matrix: lab %+v, %v; want mtu 1500 again", l, err)
	}

	code, _, stderr = runMain(t, "lab", "down", "--name", name)
	if code != ExitOK {
		t.Fatalf("lab down: exit %d: %s", code, stderr)
	}
	if err := syscall.Kill(srv.PID, 0); err == nil {
		if ticks, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", srv.PID)); !strings.Contains(string(ticks), ") Z ") {
			t.Errorf("server pid %d still runs after lab down", srv.PID)
		}
	}
	if s, _ := lab.LoadServer(name); s != nil {
		t.Errorf("server still recorded after lab down: %+v", s)
	}
	if _, err := os.Stat(lab.KeyPath(name)); !os.IsNotExist(err) {
		t.Errorf("the lab's key is still there after lab down: %v", err)
	}
}

// TestLabRunWithoutServer: a lab made with --server=false has nothing for
// lab run to run against, and says how to get a server.
func TestLabRunWithoutServer(t *testing.T) {
	nstest.RequireRoot(t)
	name := fmt.Sprintf("n%d", os.Getpid())
	t.Cleanup(func() { lab.Remove(name) })
	if code, _, stderr := runMain(t, "lab", "up", "--name", name, "--server=false"); code != ExitOK {
		t.Fatalf("lab up: exit %d: %s", code, stderr)
	}
	code, _, stderr := runMain(t, "lab", "run", "--name", name, "--", "-l", "0.2")
	if code != ExitRuntime || !strings.Contains(stderr, "no server running") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
