package cli

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRunRRULLiveLines: run -t RRUL against the embedded server shows,
// by default, one line a second while it runs (both directions' sums and
// the probes answered in it), no flow's own line, and the answer before
// the detail; with -v each flow's lines.
func TestRunRRULLiveLines(t *testing.T) {
	code, out, errOut := execute(t, context.Background(), "run", "-t", "RRUL", "-l", "2", "--idle", "1s")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if regexp.MustCompile(`(?m)^\[ *([0-9]+|SUM)\]`).MatchString(out) {
		t.Errorf("a flow's interval line by default:\n%s", out)
	}
	// "  0.00-1.00   sec  6.91 Gbits/sec  5.64 Gbits/sec     0.1 ms      16 ms       55"
	line := regexp.MustCompile(`(?m)^ *\d+\.\d\d-\d+\.\d\d +sec +[0-9.]+ [KMG]?bits/sec +[0-9.]+ [KMG]?bits/sec +(\S+ ms|-) +(\S+ ms|-) +(\d+)$`)
	lines := line.FindAllStringSubmatch(out, -1)
	if len(lines) < 1 || len(lines) > 3 {
		t.Fatalf("%d interval lines with both sums for a 2 s run, want 1 to 3 (one a second):\n%s", len(lines), out)
	}
	answers := 0
	for _, l := range lines {
		n, _ := strconv.Atoi(l[3])
		answers += n
	}
	// UDP probes every 20 ms: about 50 answers a second on loopback.
	if answers == 0 {
		t.Errorf("no probe answered in any interval line:\n%s", out)
	}
	if a, d := strings.Index(out, "\nidle "), strings.Index(out, "round trip (ms)"); a < 0 || d < 0 || a > d {
		t.Errorf("the answer (idle ...) does not come before the round trip table:\n%s", out)
	}
	code, out, errOut = execute(t, context.Background(), "run", "-t", "RRUL", "-l", "1", "--idle", "1s", "-v")
	if code != ExitOK {
		t.Fatalf("-v: exit %d: %s", code, errOut)
	}
	if !regexp.MustCompile(`(?m)^\[  1\] client->server`).MatchString(out) {
		t.Errorf("-v shows no flow's interval line:\n%s", out)
	}
}
