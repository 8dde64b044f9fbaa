package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/endpoint"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// runFlags are the flags of `wirespeed run`.
type runFlags struct {
	spec spec.Test
	test string
	port int
	// connectTimeout bounds the control connection's connect (0: 5 s).
	connectTimeout time.Duration
	reverse        bool
	tradeoff       bool
	json           bool
	output         string
	payload        string
	ipv4           bool
	ipv6           bool
	measure        measureFlags
	iperf3         bool // the server is an iperf3 server (run_iperf3.go)
	// changed reports whether the user set a flag, for defaults that
	// depend on the test (UDP_STREAM's datagram size).
	changed func(name string) bool
	sec     runSecurityFlags
	record  recordFlags // --title, --label (run, sweep, matrix)
	out     outputFlags // -f, --timestamps, --logfile, --json-stream, --fields (run)
	// archive is --archive (run, sweep, matrix, mesh; archive.go), and
	// archiveSink its sink once useArchive resolved it.
	archive     string
	archiveSink *archiveSink
	rrul        rrulFlags // --load, --idle, the probe intervals (RRUL, rrulflags.go)
	verbose     bool      // -v (run, sweep, matrix, mesh)
	// logLevel is --log-level: debug logs each phase of a run with its
	// time (connect, hello, baseline, streams, windows, result, bye).
	logLevel string
	// routerQueues is --router-queue (run, hidden; rrulflags.go): a
	// routed lab's router egresses, which lab run passes.
	routerQueues []endpoint.RouterQueue
}

// textOptions are the choices of the text report the flags make.
func (f *runFlags) textOptions() report.TextOptions {
	return report.TextOptions{Unit: f.out.unit, Verbose: f.verbose}
}

func newRunCmd(e *env) *cobra.Command {
	f := &runFlags{spec: spec.Default()}
	cmd := &cobra.Command{
		Use:   "run [HOST[:PORT]]",
		Short: "Run a test against a wirespeed server (an embedded one on loopback when no HOST is given)",
		Long: `Run a test against a wirespeed server and show the result as a netperf-style
table, with iperf-style interval lines while it runs.

With no HOST, wirespeed starts a server on loopback inside the same process
and measures against it: a quick check of the host stack.

Tests (-t, any case):
  TCP_STREAM   the client sends (the default)
  TCP_MAERTS   the server sends (also -R)
  TCP_BIDIR    both directions at once
  UDP_STREAM   datagrams at a rate (-b) or as fast as possible; loss and jitter
  TCP_RR       request/response transactions on one connection; latency percentiles
  UDP_RR       the same over UDP
  TCP_CRR      a new connection for every transaction
  RRUL         latency under load (flent's rrul): TCP flows both ways beside UDP and TCP probes

The throughput is what the receiver counted over the measurement window;
-v shows the sender's count beside it, with each stream, each side's CPU,
device and environment. The text fits 100 columns; the JSON (--json) has
every figure.`,
		Example: `  wirespeed run                          # embedded loopback server, 10 s TCP_STREAM
  wirespeed run host -l 60 -m 64K        # 60 s with 64 KiB sends
  wirespeed run host -t TCP_BIDIR -P 4   # both directions, 4 streams each
  wirespeed run host --tradeoff --json   # one direction, then the other
  wirespeed run host -t UDP_STREAM -b 500M
  wirespeed run host -t TCP_RR -r 64,1K   # 64-byte requests, 1 KiB responses`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := dashHint(cmd, args); err != nil {
				return err
			}
			if len(args) > 1 {
				return usagef("run takes at most one HOST[:PORT], got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target := ""
			if len(args) == 1 {
				target = args[0]
			}
			f.changed = cmd.Flags().Changed
			return runRun(cmd.Context(), e, f, target, cmd.Flags().Changed("port"))
		},
	}
	addRunFlags(cmd, f)
	f.record.register(cmd.Flags())
	f.out.register(cmd.Flags())
	registerVerbose(cmd.Flags(), &f.verbose)
	addIperf3Flags(cmd, f)
	addRouterQueueFlag(cmd.Flags(), &f.routerQueues)
	return cmd
}

func kindList() string {
	names := make([]string, len(spec.Kinds))
	for i, k := range spec.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// buildSpec turns the flags into a validated spec: the flags' values,
// then spec.Resolve for the defaults that depend on the test.
func (f *runFlags) buildSpec() (spec.Test, error) {
	t := f.spec
	kind, err := spec.ParseKind(f.test)
	if err != nil {
		return t, usagef("%w%s", err, testFlagHint(f.test))
	}
	t.Kind = kind
	// A command line starts the UDP batches at 1, one datagram per call;
	// in a spec 0 means that default, on the command line it is a mistake.
	for _, b := range []struct {
		flag string
		n    int
	}{{"--send-batch", t.SendBatch}, {"--recv-batch", t.RecvBatch}} {
		if b.n < 1 {
			return t, usagef("%s %d must be between 1 (one datagram per system call) and %d", b.flag, b.n, spec.MaxUDPBatch)
		}
	}
	// RRUL's settings and its 4 flows a direction unless -P says (rrulflags.go).
	if err := f.rrul.apply(&t, f.changed); err != nil {
		return t, err
	}
	g := spec.Given{Reverse: f.reverse, SendSizeSet: f.changed != nil && f.changed("send-size")}
	switch {
	case f.ipv4 && f.ipv6:
		return t, usagef("-4 and -6 exclude each other")
	case f.ipv4:
		g.IPVersion = 4
	case f.ipv6:
		g.IPVersion = 6
	}
	switch f.payload {
	case spec.PayloadRandom, spec.PayloadHot, spec.PayloadZeros:
		t.Payload = spec.Payload{Kind: f.payload}
	default:
		if _, err := os.Stat(f.payload); err != nil {
			return t, usagef("--payload %q is neither random, hot, zeros nor a readable file: %v", f.payload, err)
		}
		t.Payload = spec.Payload{Kind: spec.PayloadFile, Path: f.payload}
	}
	if t, err = spec.Resolve(t, g); err != nil {
		return t, specHint(t, err)
	}
	if f.tradeoff && t.Kind != spec.TCPStream {
		return t, usagef("--tradeoff runs TCP_STREAM and TCP_MAERTS itself; drop -t %s and -R", t.Kind)
	}
	if f.output != "" {
		if err := report.CheckPath(f.output); err != nil {
			return t, usagef("%w%s", err, fieldsHint(strings.Split(f.output, ",")))
		}
	}
	if err := f.record.check(); err != nil {
		return t, err
	}
	return t, nil
}

// parseTarget splits HOST[:PORT]; an IPv6 address may be bare or in
// brackets. An empty target means the embedded server.
func parseTarget(target string, port int, portSet bool) (host string, p int, err error) {
	if port < 1 || port > 65535 {
		return "", 0, usagef("port %d must be between 1 and 65535", port)
	}
	if target == "" {
		return "", port, nil
	}
	if err := ipv6PortHint(target); err != nil {
		return "", 0, err
	}
	if a, err := netip.ParseAddr(strings.Trim(target, "[]")); err == nil {
		return a.String(), port, nil
	}
	h, ps, err := net.SplitHostPort(target)
	if err != nil {
		if strings.Contains(target, ":") {
			return "", 0, usagef("server %q: write HOST, HOST:PORT or [IPv6]:PORT", target)
		}
		return target, port, nil
	}
	n, err := strconv.Atoi(ps)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, usagef("server %q: port %q must be a number between 1 and 65535", target, ps)
	}
	if portSet && n != port {
		return "", 0, usagef("server %q names port %d but -p says %d", target, n, port)
	}
	if h == "" {
		return "", 0, usagef("server %q has no host", target)
	}
	return h, n, nil
}

// ipv6PortHint refuses an IPv6 address written with a port and no
// brackets, ::1:7576: it is also an address (::1:7576, port 7575 by
// default), which no one means. Taken as one when the last group is a
// port of at least four decimal digits after a shortened (::) address;
// fd00::2 or ::1 pass.
func ipv6PortHint(target string) error {
	i := strings.LastIndex(target, ":")
	if strings.HasPrefix(target, "[") || i < 0 || !strings.Contains(target[:i], "::") {
		return nil
	}
	host, port := target[:i], target[i+1:]
	n, err := strconv.Atoi(port)
	if len(port) < 4 || err != nil || port[0] == '+' || n < 1 || n > 65535 {
		return nil
	}
	if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
		return nil
	}
	return usagef("server %q: for %s port %s write [%s]:%s (an IPv6 address with a port goes in brackets); "+
		"for the address %s write [%s]", target, host, port, host, port, target, target)
}

func runRun(ctx context.Context, e *env, f *runFlags, target string, portSet bool) (err error) {
	e, closeLog, err := f.out.open(e, f.json)
	if err != nil {
		return err
	}
	if closeLog != nil {
		defer func() {
			if cerr := closeLog(); cerr != nil && err == nil {
				err = fmt.Errorf("--logfile: %w", cerr)
			}
		}()
	}
	if err := f.useArchive(ctx, e); err != nil {
		return err
	}
	if f.iperf3 {
		return runIperf3(ctx, e, f, target, portSet)
	}
	t, err := f.buildSpec()
	if err != nil {
		return err
	}
	if n := intervalNote(t, f.changed != nil && f.changed("interval"), f.measure.iterations); n != "" {
		fmt.Fprintln(e.stderr, n)
	}
	rep, err := f.measure.repeat()
	if err != nil {
		return err
	}
	lv := f.newLive(e.stdout, rep)
	c, err := connect(ctx, e, f, target, portSet, t.IPVersion, lv.tick(t))
	if err != nil {
		if lv.stream {
			streamEnd(e.stdout, nil, err)
		}
		return err
	}
	defer c.Close()
	lv.label = c.label
	measure := func(ctx context.Context, t spec.Test) (result.Result, error) {
		return c.iterate(ctx, t, rep, lv.progress())
	}
	return f.measureRuns(ctx, lv, "run", c.addr, t, rep, measure)
}

// embeddedServer starts a server on loopback in this process and returns
// its address and a function that stops it. The server is not stopped by
// ctx: an interrupted run still collects the server's side first.
func embeddedServer(ctx context.Context, e *env, ipVersion int) (string, func(), error) {
	listen := "127.0.0.1:0"
	if ipVersion == 6 {
		listen = "[::1]:0"
	}
	ln, err := listenTCP(ctx, listen)
	if err != nil {
		return "", nil, fmt.Errorf("embedded server: %w", err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// The embedded server serves this process alone: the limits that keep
	// a server safe to leave running would only get in the user's way.
	srv := server.New(server.Config{Tool: version(), Hostname: e.hostname, Logger: e.log, ProcRoot: e.procRoot,
		Admission: server.Admission{MaxDuration: spec.MaxDuration, MaxParallel: spec.MaxParallel, MaxUDPRateBitsPerSecond: math.Inf(1),
			MaxTestMemory: math.MaxInt64, MaxMemory: math.MaxInt64}})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	return ln.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			e.log.Warn("embedded server", "err", err)
		}
	}, nil
}
