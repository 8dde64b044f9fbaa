package cli

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADME keeps the README true to the command tree: every wirespeed
// command line in its sh blocks parses, and every flag its tables list
// exists on the command the table is about.
func TestREADME(t *testing.T) {
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := &env{stdout: io.Discard, stderr: io.Discard}
	root := newRoot(e)

	inSh := false
	section := ""
	flagCell := regexp.MustCompile("^\\| `(-[^`]+)`")
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(line, "```"):
			inSh = false
			continue
		case strings.HasPrefix(line, "## "):
			section = strings.TrimPrefix(line, "## ")
		}
		if inSh {
			cmdline := strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
			cmdline = strings.TrimPrefix(cmdline, "go run ./cmd/wirespeed ")
			cmdline = strings.TrimPrefix(cmdline, "wirespeed ")
			if cmdline == strings.TrimSpace(strings.SplitN(line, "#", 2)[0]) {
				continue // not a wirespeed command
			}
			args := strings.Fields(cmdline)
			cmd, rest, err := root.Find(args)
			if err != nil {
				t.Errorf("README: %q: %v", line, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("README: %q: %v", line, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("README: %q: %v", line, err)
			}
			lines++
			continue
		}
		m := flagCell.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(section, "`wirespeed ") {
			continue
		}
		sub := strings.Fields(strings.Trim(section, "`"))[1]
		cmd, _, err := root.Find([]string{sub})
		if err != nil {
			t.Fatalf("README section %q: %v", section, err)
		}
		for _, name := range strings.Split(m[1], ", ") {
			name = strings.Trim(name, "` ")
			var found bool
			if strings.HasPrefix(name, "--") {
				found = cmd.Flags().Lookup(strings.TrimPrefix(name, "--")) != nil
			} else {
				found = cmd.Flags().ShorthandLookup(strings.TrimPrefix(name, "-")) != nil
			}
			if !found {
				t.Errorf("README lists %s for %s, which has no such flag", name, sub)
			}
		}
	}
	if lines < 5 {
		t.Errorf("found only %d wirespeed command lines in the README", lines)
	}
}
