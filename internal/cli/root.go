// Package cli owns the command tree: it turns flags into a spec.Test,
// configs and the plans of sweep, matrix and mesh, runs the client, the
// server or those experiments, and hands results to report. It is the
// only package that reads flags. Main returns the exit status: 0 for
// success, 1 for a runtime error or an interrupted run, 2 for a usage
// error.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/mesh"
	"wirespeed/internal/result"
)

// tool names this program in the documents it writes.
func tool() result.Tool { return result.Tool{Name: "wirespeed", Version: version()} }

// Exit statuses.
const (
	ExitOK      = 0
	ExitRuntime = 1
	ExitUsage   = 2
)

// usageError marks an error as the user's input being wrong.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// errInterrupted ends a run that was stopped by a signal after its partial
// result was shown.
var errInterrupted = errors.New("interrupted: the partial result above covers what was measured before the stop")

// env is what every command gets from Main: where to write and how to log.
type env struct {
	stdout, stderr io.Writer
	log            *slog.Logger
	hostname       string
	procRoot       string // for an embedded server; "" for the default

	// resolver looks up mesh --peers-dns; nil means net.DefaultResolver.
	resolver mesh.Resolver

	// environ reads an environment variable (WIRESPEED_ARCHIVE,
	// WIRESPEED_SPOOL); nil means os.Getenv. clock is the time; nil
	// means time.Now.
	environ func(string) string
	clock   func() time.Time
}

func (e *env) getenv(key string) string {
	if e.environ == nil {
		return os.Getenv(key)
	}
	return e.environ(key)
}

func (e *env) now() time.Time {
	if e.clock == nil {
		return time.Now()
	}
	return e.clock()
}

// Main runs the command line args (without the program name) and returns
// the exit status. ctx is cancelled on SIGINT or SIGTERM.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	host, _ := os.Hostname()
	e := &env{
		stdout:   stdout,
		stderr:   stderr,
		log:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		hostname: host,
	}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "wirespeed: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitRuntime
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "wirespeed",
		Short: "Measure what a network path and the host stack can do",
		Long: `wirespeed measures what a network path and the hosts' stacks at both ends can
do, as netperf and iperf3 do: TCP and UDP throughput (either way or both),
request/response latency and connection rate, and latency under load
(RRUL). Every number comes with both sides' CPU cost, the kernel's counts
(retransmits, drops) and the environment behind it (kernel, offloads,
qdisc, sysctls), and says what limited it. Beyond one test: message-size
sweeps, offload and MTU matrices, a mesh of servers, significance tests
between results, an archive with history, plots and a Prometheus exporter.
One binary is both the server (wirespeed serve) and the client (wirespeed run).

Exit status: 0 success, 1 runtime error or interrupted run, 2 usage error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if hint := foreignFlagHint(c, err); hint != "" {
			return usageError{fmt.Errorf("%w: %s", err, hint)}
		}
		return usageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(newRunCmd(e), newServeCmd(e), newCheckCmd(e), newVersionCmd(e))
	root.AddCommand(newEnvCmd(e), newLabCmd(e))
	root.AddCommand(newSweepCmd(e), newPlotCmd(e))
	root.AddCommand(newMeshCmd(e))
	root.AddCommand(newMatrixCmd(e), newCompareCmd(e))
	root.AddCommand(newManCmd(e))
	root.AddCommand(newArchiveCmd(e), newHistoryCmd(e), newDashboardCmd(e))
	root.AddCommand(newExporterCmd(e), newVerifyCmd(e))
	hideRunFlags(root)
	// -v is --verbose wherever a command has it (netperf's -v, and the
	// docs' run -v); the version is -V, as netperf's, or --version. An
	// iperf3 user's wirespeed -v gets a hint (foreignFlagHint).
	root.Flags().BoolP("version", "V", false, "print the version, as wirespeed version does (netperf's -V; iperf3's -v)")
	root.SetUsageTemplate(usageTemplate)
	var group func(c *cobra.Command)
	group = func(c *cobra.Command) {
		groupRunFlags(c)
		for _, sub := range c.Commands() {
			group(sub)
		}
	}
	group(root)
	// The completion command now rather than at Execute, so that root.Find
	// and the man pages see it; it keeps the writer it is made with.
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.InitDefaultCompletionCmd()
	registerCompletions(root)
	return root
}

// refusedRunFlags are the run flags a command registers with the others
// (addRunFlags) but refuses: they are hidden from its help, so that help
// lists only what the command takes. TestHelpListsOnlyAcceptedFlags holds
// each to a refusal.
var refusedRunFlags = map[string][]string{
	"sweep": {"send-size", "tradeoff"}, // --sizes sets -m; one test per point
	"mesh":  {"tradeoff"},
}

func hideRunFlags(root *cobra.Command) {
	for name, flags := range refusedRunFlags {
		cmd, _, err := root.Find([]string{name})
		if err != nil || cmd == root {
			panic(fmt.Sprintf("refusedRunFlags names %q, which is no command", name))
		}
		for _, fl := range flags {
			if err := cmd.Flags().MarkHidden(fl); err != nil {
				panic(fmt.Sprintf("refusedRunFlags: %s --%s: %v", name, fl, err))
			}
		}
	}
}

// noArgs is cobra.NoArgs reporting a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}
