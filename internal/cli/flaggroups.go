package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Help that can be scanned: every command's help fits helpWidth columns,
// and the run flags (which run, sweep, mesh and matrix share) are shown in
// groups, as iperf3 shows its own. Cobra groups commands but not flags, so
// a flag's group is a pflag annotation (groupAnnotation) set from
// flagGroups, and the usage template (usageTemplate) prints one wrapped
// pflag.FlagSet per group.

// helpWidth is the widest line of any help text.
const helpWidth = 100

// groupAnnotation is the pflag annotation naming a flag's help group.
const groupAnnotation = "wirespeed_help_group"

// flagGroups are the groups of the run flags, in the order help shows
// them, each with its flags in that order. A command's flags in no group
// (sweep's --sizes, say) come first under "Flags:".
var flagGroups = []struct {
	title string
	flags []string
}{
	{"Test", []string{"test", "reverse", "length", "omit", "tradeoff", "iterations", "confidence",
		"iperf3", "load", "idle", "probe-interval", "tcp-probe-interval"}},
	{"Load shape", []string{"parallel", "send-size", "recv-size", "bandwidth", "bytes", "blocks",
		"rr-sizes", "burst", "payload", "fq-rate"}},
	{"Sockets and data path", []string{"local-sockbuf", "remote-sockbuf", "cc", "nodelay", "mptcp", "zerocopy", "rx",
		"busy-poll", "gso", "gro", "send-batch", "recv-batch", "rx-timestamp", "bind", "bind-dev", "cport",
		"tos", "dscp", "mss", "dont-fragment", "ipv4", "ipv6"}},
	{"Output", []string{"verbose", "interval", "format", "json", "json-stream", "output", "archive",
		"fields", "fields-style", "title", "label", "timestamps", "logfile", "log-level", "progress", "help"}},
	{"CPU and environment", []string{"cpu", "pin", "proc-root"}},
	{"Server and security", []string{"port", "connect-timeout", "psk-file", "tls-ca", "tls-fingerprint"}},
}

// groupRunFlags annotates cmd's flags with their help group; a command
// without the run flags is left as it is (one "Flags:" list). Call it
// after the flags are defined.
func groupRunFlags(cmd *cobra.Command) {
	if cmd.Flags().Lookup("test") == nil || cmd.Flags().Lookup("psk-file") == nil {
		return
	}
	cmd.InitDefaultHelpFlag()
	for _, g := range flagGroups {
		for _, name := range g.flags {
			if cmd.Flags().Lookup(name) != nil {
				_ = cmd.Flags().SetAnnotation(name, groupAnnotation, []string{g.title})
			}
		}
	}
}

// flagSections is the flags part of cmd's help: its flags in no group
// under "Flags:", then each group's under its title, every line wrapped
// to helpWidth.
func flagSections(cmd *cobra.Command) string {
	ungrouped := pflag.NewFlagSet("", pflag.ContinueOnError)
	ungrouped.SortFlags = false
	grouped := make(map[string]*pflag.Flag)
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if len(f.Annotations[groupAnnotation]) > 0 {
			grouped[f.Name] = f
		} else {
			ungrouped.AddFlag(f)
		}
	})
	groups := make(map[string]*pflag.FlagSet)
	for _, g := range flagGroups {
		set := pflag.NewFlagSet(g.title, pflag.ContinueOnError)
		set.SortFlags = false
		for _, name := range g.flags {
			if f := grouped[name]; f != nil && f.Annotations[groupAnnotation][0] == g.title {
				set.AddFlag(f)
			}
		}
		groups[g.title] = set
	}
	var b strings.Builder
	section := func(title string, set *pflag.FlagSet) {
		if !set.HasAvailableFlags() {
			return
		}
		fmt.Fprintf(&b, "\n\n%s:\n%s", title, strings.TrimRight(set.FlagUsagesWrapped(helpWidth), " \n"))
	}
	section("Flags", ungrouped)
	for _, g := range flagGroups {
		section(g.title+" flags", groups[g.title])
	}
	if in := cmd.InheritedFlags(); in.HasAvailableFlags() {
		section("Global Flags", in)
	}
	return b.String()
}

// commandLine is a subcommand's line in its parent's help, its summary
// wrapped to helpWidth under itself.
func commandLine(c *cobra.Command) string {
	indent := 2 + c.NamePadding() + 1
	return "  " + fmt.Sprintf("%-*s ", c.NamePadding(), c.Name()) + wrapWords(c.Short, indent, helpWidth)
}

// wrapWords breaks s at spaces into lines of at most width columns, the
// first starting at column indent (its indent written by the caller), the
// others indented by indent.
func wrapWords(s string, indent, width int) string {
	var b strings.Builder
	col := indent
	for i, w := range strings.Fields(s) {
		if i > 0 && col+1+len([]rune(w)) > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len([]rune(w))
	}
	return b.String()
}

// usageTemplate is cobra's default usage template with the flags in
// groups (flagSections) and the command summaries wrapped (commandLine).
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
{{commandLine .}}{{end}}{{end}}{{end}}{{flagSections .}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

func init() {
	cobra.AddTemplateFunc("flagSections", flagSections)
	cobra.AddTemplateFunc("commandLine", commandLine)
}
