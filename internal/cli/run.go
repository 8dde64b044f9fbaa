package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/comparison"
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
}

func newRunCmd(e *env) *cobra.Command {
	f := &runFlags{spec: spec.Default()}
	var cmd *cobra.Command
	cmd = &cobra.Command{
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

The throughput is what the receiver counted over the measurement window;
the sender's count is shown beside it.`,
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
	addIperf3Flags(cmd, f)
	return cmd
}

func kindList() string {
	names := make([]string, len(spec.Kinds))
	for i, k := range spec.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// buildSpec turns the flags into a validated spec.
func (f *runFlags) buildSpec() (spec.Test, error) {
	t := f.spec
	kind, err := spec.ParseKind(f.test)
	if err != nil {
		return t, usagef("%w%s", err, testFlagHint(f.test))
	}
	t.Kind = kind
	if f.reverse {
		switch kind {
		case spec.TCPStream, spec.TCPMaerts:
			t.Kind = spec.TCPMaerts
		case spec.UDPStream:
			t.Reverse = true
		default:
			return t, usagef("-R reverses TCP_STREAM and UDP_STREAM; it does not apply to %s", kind)
		}
	}
	if t.Kind == spec.UDPStream && (f.changed == nil || !f.changed("send-size")) {
		t.SendSize = spec.DefaultUDPSize
		switch {
		case t.GSOSize > 0:
			t.SendSize = spec.GSOSendSize(t.GSOSize) // --gso: -m is the bytes per send
		case f.ipv6:
			t.SendSize = spec.DefaultUDP6Size
		}
	}
	// UDP batches (issue 15): the flags' default, one datagram per call,
	// is recorded for UDP_STREAM only, the test they apply to. In a spec,
	// 0 means the default; on the command line it is a mistake.
	for _, b := range []struct {
		flag string
		n    int
	}{{"--send-batch", t.SendBatch}, {"--recv-batch", t.RecvBatch}} {
		if b.n < 1 {
			return t, usagef("%s %d must be between 1 (one datagram per system call) and %d", b.flag, b.n, spec.MaxUDPBatch)
		}
	}
	if t.Kind != spec.UDPStream {
		if t.SendBatch == 1 {
			t.SendBatch = 0
		}
		if t.RecvBatch == 1 {
			t.RecvBatch = 0
		}
	}
	if f.tradeoff && t.Kind != spec.TCPStream {
		return t, usagef("--tradeoff runs TCP_STREAM and TCP_MAERTS itself; drop -t %s and -R", t.Kind)
	}
	switch {
	case f.ipv4 && f.ipv6:
		return t, usagef("-4 and -6 exclude each other")
	case f.ipv4:
		t.IPVersion = 4
	case f.ipv6:
		t.IPVersion = 6
	}
	switch f.payload {
	case spec.PayloadRandom, spec.PayloadZeros:
		t.Payload = spec.Payload{Kind: f.payload}
	default:
		if _, err := os.Stat(f.payload); err != nil {
			return t, usagef("--payload %q is neither random, zeros nor a readable file: %v", f.payload, err)
		}
		t.Payload = spec.Payload{Kind: spec.PayloadFile, Path: f.payload}
	}
	if err := t.Validate(); err != nil {
		return t, specHint(t, err)
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
	stream := f.out.jsonStream
	text := !f.json && !stream && f.out.fields == nil
	var mu sync.Mutex
	headerShown := false
	onTick := func(tk result.Tick) {
		mu.Lock()
		defer mu.Unlock()
		if !headerShown {
			report.IntervalHeader(e.stdout)
			headerShown = true
		}
		report.TickIn(f.out.tickWriter(e.stdout), tk, f.out.unit)
	}
	switch {
	case t.Interval == 0:
		onTick = nil
	case stream:
		onTick = streamTick(e.stdout, &mu)
	case !text:
		onTick = nil
	}
	c, err := connect(ctx, e, f, target, portSet, t.IPVersion, onTick)
	if err != nil {
		if stream {
			streamEnd(e.stdout, nil, err)
		}
		return err
	}
	defer c.Close()
	addr, label := c.addr, c.label
	if stream {
		report.Stream(e.stdout, "start", report.StreamStart{Server: addr, Spec: t})
	}

	kinds := []spec.Kind{t.Kind}
	if f.tradeoff {
		kinds = []spec.Kind{spec.TCPStream, spec.TCPMaerts}
	}
	doc := result.Document{Schema: result.Schema, Tool: tool(), Command: "run"}
	f.record.apply(&doc)
	if rep.Repeats() {
		doc.Repeat = &rep
	}
	var results []result.Result
	var runErr error
	for i, k := range kinds {
		tk := t
		tk.Kind = k
		if text {
			if i > 0 {
				fmt.Fprintln(e.stdout)
			}
			report.Record(e.stdout, doc.Title, doc.Labels)
			report.Heading(e.stdout, tk, label)
			mu.Lock()
			headerShown = false
			mu.Unlock()
		}
		res, err := c.Iterate(ctx, tk, rep, iterationLines(e.stdout, text && rep.Repeats(), &mu, func() { headerShown = false }))
		if err != nil && len(res.Directions) == 0 {
			runErr = err
			break
		}
		res.Remote.Address = addr
		results = append(results, res)
		if text {
			fmt.Fprintln(e.stdout)
			report.TextIn(e.stdout, res, f.out.unit)
		}
		if err != nil {
			runErr = err
			break
		}
		if res.Interrupted {
			break
		}
	}
	if len(results) == 0 {
		if stream {
			streamEnd(e.stdout, nil, runErr)
		}
		return runErr
	}
	doc.Result = results[0]
	var trade result.Tradeoff
	if len(results) > 1 {
		doc.Runs = results
	}
	if len(results) == 2 {
		trade = comparison.Tradeoff(results[0], results[1])
		doc.Tradeoff = &trade
	}
	textDoc := func(w io.Writer) {
		for _, r := range results {
			report.TextIn(w, r, f.out.unit)
			fmt.Fprintln(w)
		}
		if len(results) == 2 {
			report.TradeoffIn(w, results[0], results[1], trade, f.out.unit)
		}
	}
	if text && len(results) == 2 {
		fmt.Fprintln(e.stdout)
		report.TradeoffIn(e.stdout, results[0], results[1], trade, f.out.unit)
	}
	switch {
	case f.out.fields != nil:
		if err := report.Fields(e.stdout, doc, f.out.fields, f.out.fieldStyle); err != nil {
			return err
		}
	case stream:
		if err := streamEnd(e.stdout, &doc, nil); err != nil {
			return err
		}
	case f.json:
		if err := report.JSON(e.stdout, doc); err != nil {
			return err
		}
	}
	if f.output != "" {
		if err := report.WriteFile(f.output, doc, textDoc); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	for _, r := range results {
		if r.Interrupted {
			return errInterrupted
		}
	}
	return nil
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
		Limits: server.Limits{MaxDuration: spec.MaxDuration, MaxParallel: spec.MaxParallel, MaxUDPRateBitsPerSecond: math.Inf(1),
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
