package cli

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// complete runs cobra's hidden __complete command, as the shell scripts
// `wirespeed completion` writes do, and returns the candidates.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := execute(t, context.Background(), append([]string{"__complete"}, args...)...)
	if code != ExitOK {
		t.Fatalf("__complete %q: exit %d: %s", args, code, errOut)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, ":") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return got
}

func TestCompletion(t *testing.T) {
	has := func(got []string, want ...string) bool {
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				return false
			}
		}
		return true
	}
	if got := complete(t, "run", "-t", "TCP_"); len(got) != 5 || !has(got, "TCP_STREAM", "TCP_MAERTS", "TCP_BIDIR", "TCP_RR", "TCP_CRR") {
		t.Errorf("run -t TCP_: %q, want the five TCP tests", got)
	}
	if got := complete(t, "sweep", "-t", "udp"); len(got) != 2 || !has(got, "UDP_STREAM", "UDP_RR") {
		t.Errorf("sweep -t udp: %q", got)
	}
	if got := complete(t, "matrix", "--set", "remote:ts"); len(got) != 1 || got[0] != "remote:tso=" {
		t.Errorf("matrix --set remote:ts: %q", got)
	}
	if got := complete(t, "matrix", "--set", "gro="); !has(got, "gro=on,off", "gro=off") {
		t.Errorf("matrix --set gro=: %q", got)
	}
	if got := complete(t, "matrix", "--set", "mtu=9"); len(got) != 1 || got[0] != "mtu=9000" {
		t.Errorf("matrix --set mtu=9: %q", got)
	}
	// Device names: checked against the kernel's list, read here through
	// the standard library rather than the completion's own code path.
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	for _, cmd := range [][]string{{"env", "--dev", ""}, {"matrix", "--dev", ""}} {
		if got := complete(t, cmd...); len(got) != len(names) || !has(got, names...) {
			t.Errorf("%q: %q, want %q", cmd, got, names)
		}
	}
	if got := complete(t, "env", "--dev", "l"); !has(got, "lo") {
		t.Errorf("env --dev l: %q", got)
	}
	if got := complete(t, "lab", "exec", "--side", ""); len(got) != 2 || !has(got, "a", "b") {
		t.Errorf("lab exec --side: %q", got)
	}
	// Lab names: those /run/netns holds, read here without package lab.
	labs := map[string]bool{}
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			if n, ok := strings.CutPrefix(e.Name(), "wst-"); ok && strings.HasSuffix(n, "-a") {
				labs[strings.TrimSuffix(n, "-a")] = true
			}
		}
	}
	got := complete(t, "lab", "down", "--name", "")
	for _, g := range got {
		if !labs[g] {
			t.Errorf("lab down --name completes %q, which is no lab (%v)", g, labs)
		}
	}
	// The scripts themselves come from cobra; check one is produced.
	code, out, _ := execute(t, context.Background(), "completion", "bash")
	if code != ExitOK || !strings.Contains(out, "__complete") {
		t.Errorf("completion bash: exit %d, %d bytes", code, len(out))
	}
}

func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	if code, _, errOut := execute(t, context.Background(), "man", dir); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(filepath.Join(dir, "wirespeed-run.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`.TH "WIRESPEED" "1"`, `\fB--fq-rate\fP`, "TCP_CRR", `\fB--iperf3\fP`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("wirespeed-run.1 lacks %q", want)
		}
	}
	// One page per command that is not hidden.
	e := &env{stdout: io.Discard, stderr: io.Discard}
	var want int
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		want++
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot(e))
	files, _ := os.ReadDir(dir)
	if len(files) < want-1 || len(files) > want+6 { // completion's subcommands are added at run time
		t.Errorf("%d pages for %d commands", len(files), want)
	}
	if code, _, _ := execute(t, context.Background(), "man"); code != ExitUsage {
		t.Errorf("man without DIR: exit %d, want %d", code, ExitUsage)
	}
}

// TestHelpListsOnlyAcceptedFlags: a run flag a command refuses is hidden
// from its help, and refused when given.
func TestHelpListsOnlyAcceptedFlags(t *testing.T) {
	refused := map[string][]string{
		"sweep":  {"127.0.0.1:1"},
		"mesh":   {"--peers", "127.0.0.1:1,127.0.0.1:2"},
		"matrix": {"127.0.0.1:1", "--set", "mtu=1500"},
	}
	flagArgs := map[string][]string{"send-size": {"-m", "64"}, "tradeoff": {"--tradeoff"}}
	for cmd, flags := range refusedRunFlags {
		_, help, _ := execute(t, context.Background(), cmd, "--help")
		for _, fl := range flags {
			if regexp.MustCompile(`(?m)^\s+(-\w, )?--` + fl + `\b`).MatchString(help) {
				t.Errorf("%s --help lists --%s, which %s refuses", cmd, fl, cmd)
			}
			args := append(append([]string{cmd}, refused[cmd]...), flagArgs[fl]...)
			code, _, errOut := execute(t, context.Background(), args...)
			if code != ExitUsage || !strings.Contains(errOut, strings.TrimLeft(flagArgs[fl][0], "-")) {
				t.Errorf("%q: exit %d, %q; want a usage error naming the flag", args, code, errOut)
			}
		}
	}
	// run --help names every test.
	_, help, _ := execute(t, context.Background(), "run", "--help")
	for _, k := range []string{"TCP_STREAM", "TCP_MAERTS", "TCP_BIDIR", "UDP_STREAM", "TCP_RR", "UDP_RR", "TCP_CRR"} {
		if strings.Count(help, k) < 2 { // the -t flag's list, and the description
			t.Errorf("run --help does not describe %s", k)
		}
	}
}

// TestHelpExamples parses every command's help examples as the README
// test parses the README's: each must name a command and flags that exist.
// An example that starts a client in a lab (lab exec -- wirespeed run
// 10.77.0.1) must prove the lab server's key, as the server requires it.
func TestHelpExamples(t *testing.T) {
	e := &env{stdout: io.Discard, stderr: io.Discard}
	root := newRoot(e)
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// A long example goes on over lines ending in a backslash.
		example := regexp.MustCompile(` \\\n\s*`).ReplaceAllString(c.Example, " ")
		for _, line := range strings.Split(example, "\n") {
			line = strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
			if !strings.HasPrefix(line, "wirespeed ") {
				continue
			}
			for _, part := range strings.Split(line, " && ") {
				part = strings.TrimSpace(part)
				if !strings.HasPrefix(part, "wirespeed ") {
					continue
				}
				if err := parseCommandLine(root, strings.Fields(part)[1:]); err != nil {
					t.Errorf("%s example %q: %v", c.CommandPath(), part, err)
				}
				n++
			}
			if inner, ok := strings.CutPrefix(line, "wirespeed lab exec"); ok {
				_, cmdline, _ := strings.Cut(inner, " -- ")
				f := strings.Fields(cmdline)
				if len(f) > 1 && f[0] == "wirespeed" && f[1] == "run" && !strings.Contains(cmdline, "--psk-file") {
					t.Errorf("%s example %q: a lab's server needs --psk-file", c.CommandPath(), line)
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if n < 15 {
		t.Errorf("found only %d example command lines", n)
	}
}
