package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"wirespeed/internal/spec"
)

// TestHelpFitsWidth: every line of every command's help is at most 100
// columns wide.
func TestHelpFitsWidth(t *testing.T) {
	root := newRoot(&env{})
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, out, errOut := execute(t, context.Background(), args...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		n++
		for i, l := range strings.Split(out, "\n") {
			if w := utf8.RuneCountInString(l); w > 100 {
				t.Errorf("%s --help line %d is %d columns: %q", c.CommandPath(), i+1, w, l)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 20 {
		t.Errorf("looked at %d commands' help, want every command's", n)
	}
}

// flagLine is a flag's line in help: its long name.
var flagLine = regexp.MustCompile(`^  (?:-\S, |    )--([a-z0-9-]+)`)

// helpSections splits help's flag lists by their title line ("Test
// flags:") and returns each flag's sections.
func helpSections(help string) map[string][]string {
	in := map[string][]string{}
	section := ""
	for _, l := range strings.Split(help, "\n") {
		if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") {
			section = l
			continue
		}
		if m := flagLine.FindStringSubmatch(l); m != nil && strings.HasSuffix(section, "lags:") {
			in[m[1]] = append(in[m[1]], section)
		}
	}
	return in
}

// TestRunHelpGroupsFlags: run's help shows each of its flags in exactly
// one of the groups, none left in an ungrouped list; sweep, mesh and matrix
// show each of theirs once, their own ungrouped.
func TestRunHelpGroupsFlags(t *testing.T) {
	titles := []string{"Test flags:", "Load shape flags:", "Sockets and data path flags:", "Output flags:",
		"CPU and environment flags:", "Server and security flags:"}
	for _, name := range []string{"run", "sweep", "mesh", "matrix"} {
		_, help, _ := execute(t, context.Background(), name, "--help")
		for _, title := range titles {
			if !strings.Contains(help, "\n"+title+"\n") {
				t.Errorf("%s --help has no %q", name, title)
			}
		}
		in := helpSections(help)
		c, _, err := newRoot(&env{}).Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		c.InitDefaultHelpFlag()
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			if got := in[f.Name]; len(got) != 1 {
				t.Errorf("%s --help lists --%s in %q, want one group", name, f.Name, got)
			} else if name == "run" && got[0] == "Flags:" {
				t.Errorf("run --help leaves --%s out of the groups", f.Name)
			}
		})
	}
}

// TestRunHelpListsTests: the Tests block of run's help has one line per
// test kind spec knows.
func TestRunHelpListsTests(t *testing.T) {
	_, help, _ := execute(t, context.Background(), "run", "--help")
	_, block, ok := strings.Cut(help, "Tests (-t, any case):\n")
	if !ok {
		t.Fatalf("run --help has no Tests block:\n%s", help)
	}
	block, _, _ = strings.Cut(block, "\n\n")
	listed := map[string]int{}
	for _, l := range strings.Split(block, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			listed[f[0]]++
		}
	}
	for _, k := range spec.Kinds {
		if listed[string(k)] != 1 {
			t.Errorf("run --help's Tests block lists %s %d times, want once:\n%s", k, listed[string(k)], block)
		}
	}
	if len(listed) != len(spec.Kinds) {
		t.Errorf("run --help's Tests block lists %d tests, spec has %d", len(listed), len(spec.Kinds))
	}
}

// TestVerboseIsV: -v is --verbose in every command that has a --verbose,
// and nothing else; the version is -V or --version, and wirespeed -v (an
// iperf3 user's version) is a usage error that says so.
func TestVerboseIsV(t *testing.T) {
	root := newRoot(&env{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().ShorthandLookup("v"); f != nil && f.Name != "verbose" {
			t.Errorf("%s: -v is --%s, want --verbose", c.CommandPath(), f.Name)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, args := range [][]string{{"-V"}, {"--version"}} {
		code, out, _ := execute(t, context.Background(), args...)
		if code != ExitOK || !strings.HasPrefix(out, "wirespeed version ") {
			t.Errorf("%q: exit %d, %q; want the version", args, code, out)
		}
	}
	for _, args := range [][]string{{"-v"}, {"serve", "-v"}} {
		code, _, errOut := execute(t, context.Background(), args...)
		if code != ExitUsage || !strings.Contains(errOut, "wirespeed -V") || !strings.Contains(errOut, "--verbose") {
			t.Errorf("%q: exit %d, %q; want a usage error naming -V and --verbose", args, code, errOut)
		}
	}
}
