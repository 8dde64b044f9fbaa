package cli

import (
	"io"
	"slices"
	"testing"
)

// TestCookbook keeps docs/cookbook.md's recipes valid: every wirespeed
// command line in its sh blocks parses against the command tree, and for
// `lab run ... -- ARGS` the client's command line after "--" parses too,
// as the command it names (run when none).
func TestCookbook(t *testing.T) {
	e := &env{stdout: io.Discard, stderr: io.Discard}
	lines := docCommands(t, "../../docs/cookbook.md", nil)
	if len(lines) < 6 {
		t.Fatalf("found only %d wirespeed command lines in docs/cookbook.md", len(lines))
	}
	for _, l := range lines {
		if err := parseCommandLine(newRoot(e), l.args); err != nil {
			t.Errorf("cookbook: %q: %v", l.text, err)
			continue
		}
		if len(l.args) < 2 || l.args[0] != "lab" || l.args[1] != "run" {
			continue
		}
		dash := slices.Index(l.args, "--")
		if dash < 0 {
			t.Errorf("cookbook: %q: lab run without -- before the client's flags", l.text)
			continue
		}
		inner := []string{"run"}
		for _, a := range l.args[2:dash] {
			if a == "sweep" || a == "matrix" || a == "mesh" {
				inner = []string{a}
			}
		}
		inner = append(inner, l.args[dash+1:]...)
		if err := parseCommandLine(newRoot(e), inner); err != nil {
			t.Errorf("cookbook: %q: the client's %v: %v", l.text, inner, err)
		}
	}
}
