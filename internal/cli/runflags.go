package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/measure"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// measureFlags are the run flags about how a measurement is taken rather
// than what runs: CPU sampling, iterations and confidence.
type measureFlags struct {
	procRoot   string
	iterations iterationsValue
	confidence confidenceValue
}

// addRunFlags registers the flags of `wirespeed run` on cmd. `wirespeed
// sweep` registers the same ones, so the two commands cannot drift apart.
func addRunFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVarP(&f.test, "test", "t", string(spec.TCPStream), "test to run: "+kindList())
	cmd.RegisterFlagCompletionFunc("test", completeTests)
	fl.BoolVarP(&f.reverse, "reverse", "R", false, "server sends (TCP_MAERTS; UDP_STREAM from the server)")
	fl.VarP(durationValue{&f.spec.Duration}, "length", "l", "measurement window: seconds (60) or a duration (2s, 500ms, 1m)")
	fl.VarP(bytesValue{&f.spec.SendSize}, "send-size", "m", "bytes per send call (131072, 128K); UDP_STREAM: datagram payload, default 1472")
	fl.VarP(bytesValue{&f.spec.RecvSize}, "recv-size", "M", "bytes per receive call")
	fl.VarP(bytesValue{&f.spec.LocalSockBuf}, "local-sockbuf", "s", "SO_SNDBUF/SO_RCVBUF to ask for on the client's data sockets (0: system default)")
	fl.VarP(bytesValue{&f.spec.RemoteSockBuf}, "remote-sockbuf", "S", "SO_SNDBUF/SO_RCVBUF to ask for on the server's data sockets (0: system default)")
	fl.IntVarP(&f.spec.Parallel, "parallel", "P", 1, "streams per direction (connections for request/response tests)")
	fl.VarP(rateValue{&f.spec.RateBitsPerSecond}, "bandwidth", "b", "payload bits/s per stream (500M, 2G; iperf3's -b), UDP_STREAM and TCP stream tests; 0: as fast as possible")
	// Fixed amount: -n, -k.
	fl.VarP(amountValue{&f.spec.AmountBytes}, "bytes", "n", "send this many bytes per direction instead of for -l (iperf3's -n: 100M is 100 MiB); -l stays the limit")
	fl.VarP(amountValue{&f.spec.AmountBlocks}, "blocks", "k", "send this many blocks of -m bytes per direction instead of for -l (iperf3's -k); as -n otherwise")
	fl.VarP(rrSizesValue{&f.spec.RequestSize, &f.spec.ResponseSize}, "rr-sizes", "r", "request/response tests: REQ,RESP bytes (1,1), or one size for both")
	fl.IntVar(&f.spec.Burst, "burst", 1, "request/response tests: transactions in flight per connection")
	fl.Var(durationValue{&f.spec.Omit}, "omit", "warm-up before the window, left out of the result")
	fl.VarP(intervalValue{durationValue{&f.spec.Interval}, &f.measure.iterations}, "interval", "i",
		"interval report period (0: none); MAX,MIN is netperf's -i, as --iterations")
	fl.StringVar(&f.spec.CongestionControl, "cc", "", "TCP congestion control on both sides' data sockets, e.g. cubic (default: the system's)")
	fl.BoolVar(&f.spec.NoDelay, "nodelay", false, "set TCP_NODELAY (disable Nagle) on data sockets")
	fl.BoolVar(&f.spec.MPTCP, "mptcp", false, "TCP_STREAM, TCP_MAERTS, TCP_BIDIR, TCP_RR: Multipath TCP data connections on both sides (iperf3's -m; -m is the send size here); the result says any that fell back to TCP")
	fl.StringVar(&f.payload, "payload", spec.PayloadRandom, "what to send: random (incompressible), hot (a ring that stays in the CPU's cache, as netperf's: cheaper copies, but compressible), zeros, or a FILE's contents (up to 1 MiB)")
	addDataPathFlags(fl, f)
	addSockOptFlags(fl, f)    // -B, --bind-dev, --cport, --tos, --dscp, --mss, --dont-fragment
	addRRULFlags(fl, &f.rrul) // --load, --idle, --probe-interval, --tcp-probe-interval
	fl.BoolVar(&f.tradeoff, "tradeoff", false, "run TCP_STREAM, then TCP_MAERTS, and show both directions side by side")
	fl.Var(&f.measure.iterations, "iterations", "MAX,MIN iterations (netperf's -i): stop after MIN once -I is reached, at MAX anyway (10,3 with -I)")
	fl.VarP(&f.measure.confidence, "confidence", "I", "LEVEL,WIDTH interval to reach over iterations (netperf's -I): 99,5 is 99% conf., +/-2.5%")
	f.spec.CPU = true
	fl.BoolVar(&f.spec.CPU, "cpu", true, "measure CPU utilization and service demand on both sides (--cpu=false to skip)")
	fl.StringVar(&f.measure.procRoot, "proc-root", measure.DefaultProcRoot, "where procfs is mounted, for the local CPU figures")
	fl.IntVarP(&f.port, "port", "p", server.DefaultPort, "server port, when HOST does not give one")
	f.connectTimeout = 5 * time.Second
	fl.Var(durationValue{&f.connectTimeout}, "connect-timeout", "give up connecting after this long: seconds or a duration, 500ms (iperf3's --connect-timeout)")
	fl.BoolVarP(&f.ipv4, "ipv4", "4", false, "use IPv4 only")
	fl.BoolVarP(&f.ipv6, "ipv6", "6", false, "use IPv6 only")
	fl.BoolVar(&f.json, "json", false, "print the JSON results document instead of text")
	fl.StringVarP(&f.output, "output", "o", "", "also write the result to FILE: .json, .csv or .txt")
	registerArchiveFlag(fl, &f.archive)
	f.sec.register(fl)
	fl.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug (each phase of a run, timed), info, warn or error")
}

// repeat returns the iterations and confidence the flags ask for: one run
// unless -I or --iterations (or -i MAX,MIN) says otherwise; 10,3
// iterations when -I is given alone; 99,5 when iterating without -I.
func (m *measureFlags) repeat() (spec.Repeat, error) {
	r := spec.DefaultRepeat()
	if m.confidence.set {
		r.ConfidenceLevel, r.ConfidenceWidthPct = m.confidence.level, m.confidence.widthPct
		r.MaxIterations, r.MinIterations = spec.DefaultMaxIterations, spec.DefaultMinIterations
	}
	if m.iterations.set {
		r.MaxIterations, r.MinIterations = m.iterations.max, m.iterations.min
	}
	if m.confidence.set && r.MaxIterations < 2 {
		return r, usagef("-I needs at least 2 iterations for an interval: leave --iterations out (10,3) or give MAX of 2 or more")
	}
	if err := r.Validate(); err != nil {
		return r, usageError{err}
	}
	return r, nil
}

// iterationsValue is netperf's -i MAX,MIN: the most and the fewest
// iterations. MAX alone sets the minimum to 3, or MAX when it is smaller.
type iterationsValue struct {
	max, min int
	set      bool
}

func (v *iterationsValue) String() string {
	if !v.set {
		return ""
	}
	return fmt.Sprintf("%d,%d", v.max, v.min)
}

func (v *iterationsValue) Set(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return fmt.Errorf("iterations %q: write MAX,MIN such as 10,3", s)
	}
	n := make([]int, len(parts))
	for i, p := range parts {
		x, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || x < 1 {
			return fmt.Errorf("iterations %q: MAX and MIN are counts of 1 or more, such as 10,3", s)
		}
		n[i] = x
	}
	v.max, v.min = n[0], min(spec.DefaultMinIterations, n[0])
	if len(n) == 2 {
		v.min = n[1]
	}
	if v.min > v.max {
		return fmt.Errorf("iterations %q: MIN %d is more than MAX %d (netperf's order is MAX,MIN)", s, v.min, v.max)
	}
	v.set = true
	return nil
}

func (v *iterationsValue) Type() string { return "MAX,MIN" }

// intervalValue is -i: an interval (iperf's meaning, the default) or,
// when it holds a comma, netperf's iterations MAX,MIN. A duration never
// contains a comma, so the two cannot be confused; netperf's single-value
// form (-i 10) is read as an interval.
type intervalValue struct {
	interval   durationValue
	iterations *iterationsValue
}

func (v intervalValue) String() string { return v.interval.String() }

func (v intervalValue) Set(s string) error {
	if strings.Contains(s, ",") {
		return v.iterations.Set(s)
	}
	return v.interval.Set(s)
}

func (v intervalValue) Type() string { return "duration|MAX,MIN" }

// confidenceValue is netperf's -I LEVEL[,WIDTH]: the confidence level in
// percent and the widest interval accepted, full width in percent of the
// mean (default 5).
type confidenceValue struct {
	level, widthPct float64
	set             bool
}

func (v *confidenceValue) String() string {
	if !v.set {
		return ""
	}
	return fmt.Sprintf("%g,%g", 100*v.level, v.widthPct)
}

func (v *confidenceValue) Set(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return fmt.Errorf("confidence %q: write LEVEL,WIDTH such as 99,5", s)
	}
	level, err := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
	if err != nil || !(level >= 50 && level < 100) {
		return fmt.Errorf("confidence level %q: a percentage from 50 up to (not including) 100, such as 95 or 99", parts[0])
	}
	width := float64(spec.DefaultConfidenceWidthPct)
	if len(parts) == 2 {
		width, err = strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
		if err != nil || !(width > 0 && width <= 200) {
			return fmt.Errorf("confidence width %q: the full width of the interval in percent of the mean, more than 0, such as 5 for +/-2.5%%", parts[1])
		}
	}
	v.level, v.widthPct, v.set = level/100, width, true
	return nil
}

func (v *confidenceValue) Type() string { return "LEVEL,WIDTH" }
