package cli

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLabRecipes keeps the lab recipes of docs/lab.md and docs/cookbook.md
// to what lab makes: no sh block shapes a link by hand (tc, ip netns exec:
// lab up's --rate, --latency, --queue, --burst and --one-way do it), and
// every lab run line's client flags parse as the command it names (run,
// sweep, matrix or mesh). TestCookbook and TestREADME parse the lab
// command lines themselves.
func TestLabRecipes(t *testing.T) {
	handShaping := regexp.MustCompile(`(^|[;&|]\s*|\bdo\s+)(tc|ip\s+netns\s+exec)\s`)
	e := &env{stdout: io.Discard, stderr: io.Discard}
	runs := 0
	for _, path := range []string{"../../docs/lab.md", "../../docs/cookbook.md"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		inSh := false
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "```sh"):
				inSh = true
				continue
			case strings.HasPrefix(line, "```"):
				inSh = false
			}
			if inSh && handShaping.MatchString(strings.TrimSpace(strings.SplitN(line, "#", 2)[0])) {
				t.Errorf("%s: %q shapes the lab by hand: use lab up's flags", path, line)
			}
		}
		f.Close()
		for _, l := range docCommands(t, path, nil) {
			if len(l.args) < 2 || l.args[0] != "lab" || l.args[1] != "run" {
				continue
			}
			runs++
			dash := slices.Index(l.args, "--")
			if dash < 0 {
				t.Errorf("%s: %q: lab run without -- before the client's flags", path, l.text)
				continue
			}
			inner := []string{"run"}
			for _, a := range l.args[2:dash] {
				if slices.Contains(labRunCommands, a) {
					inner = []string{a}
				}
			}
			inner = append(inner, l.args[dash+1:]...)
			if err := parseCommandLine(newRoot(e), inner); err != nil {
				t.Errorf("%s: %q: the client's %v: %v", path, l.text, inner, err)
			}
		}
	}
	if runs < 10 {
		t.Errorf("found only %d lab run lines in docs/lab.md and docs/cookbook.md", runs)
	}
}
