package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"wirespeed/internal/record"

	"github.com/spf13/cobra"

	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// Hints for habits from iperf3 and netperf: a flag those tools spell
// differently is still refused (as a usage error), but the message says
// the wirespeed spelling.

var (
	unknownShorthand = regexp.MustCompile(`unknown shorthand flag: '(.)'`)
	unknownLong      = regexp.MustCompile(`unknown flag: --([^ ]+)`)
	badValue         = regexp.MustCompile(`invalid argument .* for "-(.), --`)
)

// longHints are iperf3's and netperf's long flags spelled otherwise here:
// the flag, the wirespeed flag the command must have, and the hint.
var longHints = map[string]struct{ has, hint string }{
	"extra-data":        {"label", "iperf3's --extra-data is --label KEY=VALUE here (repeatable), with --title for a title"},
	"bidir":             {"test", "iperf3's --bidir is -t TCP_BIDIR here (both directions at once)"},
	"udp":               {"test", "iperf3's --udp is -t UDP_STREAM here (-b sets its rate)"},
	"get-server-output": {"test", "iperf3's --get-server-output needs no flag here: every result holds the server's figures beside the client's (remote in the text, the remote side in --json)"},
}

// valueHints explain a value a short flag refused that fits the other
// tool's meaning of the letter: the flag, the wirespeed flag the command
// must have, and the hint.
var valueHints = map[string]struct{ has, hint string }{
	"T": {"title", "-T pins CPUs as in netperf; iperf3's -T TITLE is --title here"},
	// Socket options: iperf3's letters that mean sizes here.
	"S": {"tos", "-S is the server's socket buffer as in netperf; iperf3's -S TOS is --tos here (or --dscp NAME)"},
	"M": {"mss", "-M is the receive size as in netperf; iperf3's -M MSS is --mss here"},
}

// versionHint answers iperf3's -v (the version): -v is --verbose here,
// as netperf's -v is its verbosity, in every command that has it.
const versionHint = "-v is --verbose here (netperf's -v), in the commands that show detail; " +
	"the version (iperf3's -v) is wirespeed -V, --version or wirespeed version"

// foreignFlagHint returns what to write instead of an unknown flag err
// names, when it is a well-known iperf3 or netperf flag and cmd has the
// wirespeed equivalent; "" otherwise.
func foreignFlagHint(cmd *cobra.Command, err error) string {
	has := func(name string) bool { return cmd.Flags().Lookup(name) != nil }
	if m := unknownLong.FindStringSubmatch(err.Error()); m != nil {
		if h, ok := longHints[strings.SplitN(m[1], "=", 2)[0]]; ok && has(h.has) {
			return h.hint
		}
		return ""
	}
	if m := badValue.FindStringSubmatch(err.Error()); m != nil {
		if h, ok := valueHints[m[1]]; ok && has(h.has) {
			return h.hint
		}
		return ""
	}
	m := unknownShorthand.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	takesHost := strings.Contains(cmd.Use, "HOST")
	if cmd == cmd.Root() {
		// iperf3's own first flags, given to wirespeed itself.
		switch m[1] {
		case "s":
			return "iperf3's -s is a command here: wirespeed serve"
		case "c":
			return "iperf3's -c HOST is a command here: wirespeed run HOST"
		case "H":
			return "netperf's -H HOST is a command here: wirespeed run HOST"
		case "v":
			return versionHint
		}
		return ""
	}
	switch m[1] {
	case "v":
		// Only a command without --verbose gets here.
		return versionHint
	case "c":
		if takesHost {
			return fmt.Sprintf("iperf3's -c HOST is an argument here: %s HOST", cmd.CommandPath())
		}
	case "H":
		if takesHost {
			return fmt.Sprintf("netperf's -H HOST is an argument here: %s HOST", cmd.CommandPath())
		}
	case "s":
		if has("one-off") {
			return "iperf3's -s is this command, wirespeed serve; drop -s"
		}
	case "D":
		if has("one-off") {
			return "iperf3's -D (daemon) has no equal: run wirespeed serve under a service manager (deploy/systemd/wirespeed.service) or in the background"
		}
	case "O":
		// iperf3 users mean the omit, netperf users the output selectors.
		if has("omit") && has("fields") {
			return "-O means two things: iperf3's -O N (leave out the first N s) is --omit N here; netperf's -O selectors are --fields NAMES --fields-style table (-o writes a file)"
		}
		if has("fields") {
			return "netperf's -O selectors are --fields NAMES --fields-style table here (-o writes a file)"
		}
	case "L": // socket options
		if has("bind") {
			return "netperf's -L is -B (--bind) here: the local address to test from"
		}
	case "Y":
		if has("dscp") {
			return "netperf's -Y is --dscp NAME|N or --tos N here, for both sides' data packets"
		}
	case "J":
		if has("json") {
			return "iperf3's -J is --json here"
		}
	case "w":
		// iperf3 users mean the socket buffer, netperf users the bursts.
		if has("bandwidth") && has("local-sockbuf") {
			return "-w means two things: iperf3's -w SIZE (socket buffer) is -s SIZE for the client's sockets and -S SIZE for the server's here; netperf's -w/-b bursts are a steady rate here: -b RATE in bits/s per stream (-b 200M)"
		}
		if has("bandwidth") {
			return "netperf's -w/-b bursts (-b sends every -w ms) are a steady rate here: -b RATE in bits/s per stream (-b 200M), TCP and UDP"
		}
	case "C":
		if has("cc") {
			return "iperf3's -C ALGO is --cc ALGO here (both sides' data sockets)"
		}
	case "Z":
		if has("zerocopy") {
			return "iperf3's -Z is --zerocopy sendfile here (or --zerocopy msg for MSG_ZEROCOPY)"
		}
	case "N":
		if has("nodelay") {
			return "iperf3's -N is --nodelay here"
		}
	case "A":
		if has("pin") {
			return "iperf3's -A CPU[,REMOTE] is -T CPU[,REMOTE] here (--pin, netperf's -T)"
		}
	case "V":
		if has("verbose") {
			return "-V means two things: iperf3's -V (more detail) is -v here (--json has every figure); netperf's -V is wirespeed -V (or wirespeed version)"
		}
		if has("json") {
			return "-V means two things: iperf3's -V (more detail) is --json here, every figure of the run; netperf's -V is wirespeed -V (or wirespeed version)"
		}
	case "u":
		if has("test") {
			return "iperf3's -u is -t UDP_STREAM here (-b sets its rate)"
		}
	}
	return ""
}

// testFlagHint explains an -t value that is not a test: iperf3's -t is the
// length of the run, which is -l here (netperf's spelling).
func testFlagHint(value string) string {
	switch strings.ToUpper(value) {
	case "UDP_MAERTS":
		return "; the server sends UDP with -t UDP_STREAM -R"
	case "TCP_SENDFILE":
		return "; netperf's TCP_SENDFILE is -t TCP_STREAM --zerocopy sendfile here"
	}
	if _, err := strconv.ParseFloat(value, 64); err == nil {
		return fmt.Sprintf("; -t names the test as in netperf: for a run of %s s (iperf3's -t %s) write -l %s", value, value, value)
	}
	if _, err := units.ParseDuration(value); err == nil {
		return fmt.Sprintf("; -t names the test as in netperf: for a run of %s write -l %s", value, value)
	}
	return ""
}

// intervalNote explains a run whose -i was one number at least as long
// as the run (-i 10 with the default -l 10): iperf3's meaning, one
// report interval, runs; a netperf user meant 10 iterations. "" when -i
// was not given so, or asks for less than the run.
func intervalNote(t spec.Test, intervalSet bool, iterations iterationsValue) string {
	if !intervalSet || iterations.set || t.Interval <= 0 || t.Interval < t.Duration {
		return ""
	}
	n := t.Interval.Seconds()
	return fmt.Sprintf("note: -i %g is a report every %g s (iperf3's -i), one for this %g s run; for netperf's -i %g, %g iterations, write --iterations %g (or -i %g,3)",
		n, n, t.Duration.Seconds(), n, n, n, n)
}

// dashHint refuses netperf's `HOST -- -m 1024`: its test options come
// after --; here every flag goes before or after HOST, and the -- would
// make them arguments.
func dashHint(cmd *cobra.Command, args []string) error {
	if at := cmd.ArgsLenAtDash(); at >= 0 && len(args) > at {
		return usagef("netperf's -- before the test options is not needed here: drop the -- and give %q as flags (%s %s)",
			strings.Join(args[at:], " "), cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

// specHint adds the wirespeed spelling to a spec validation error the
// flags t was built from caused.
func specHint(t spec.Test, err error) error {
	switch {
	case t.Duration <= 0:
		return usagef("-l %v: the measurement window must be longer than 0; give seconds (-l 10) or a duration (-l 500ms), up to %gh (iperf3's -t 0, run until stopped, has no equal)", t.Duration, spec.MaxDuration.Hours())
	}
	return usageError{err}
}

// netperfFields are netperf's output selectors (-o, -O) and the --fields
// names of the same figures.
var netperfFields = map[string]string{
	"THROUGHPUT": record.Throughput.Name, "ELAPSED_TIME": record.Elapsed.Name, "PROTOCOL": "test",
	"TRANSACTION_RATE": record.Transactions.Name, "LOCAL_SEND_SIZE": "send_size", "REMOTE_RECV_SIZE": "recv_size",
	"MIN_LATENCY": record.LatencyMin.Name, "MAX_LATENCY": record.LatencyMax.Name, "MEAN_LATENCY": record.LatencyMean.Name,
	"P50_LATENCY": record.LatencyP50.Name, "P90_LATENCY": record.LatencyP90.Name, "P99_LATENCY": record.LatencyP99.Name,
	"STDDEV_LATENCY": "latency_stddev_us", "LOCAL_CPU_UTIL": record.LocalUtil.Name, "REMOTE_CPU_UTIL": record.RemoteUtil.Name,
	"LOCAL_SD": record.LocalDemand.Name, "REMOTE_SD": record.RemoteDemand.Name,
	"LOCAL_TRANSPORT_RETRANS": record.Retransmits.Name, "LOCAL_SEND_CALLS": "", "LOCAL_BYTES_SENT": "sender_bytes",
	"REMOTE_BYTES_RECVD": record.Bytes.Name,
}

// fieldsHint gives the --fields spelling of a list of netperf output
// selectors (-o THROUGHPUT,MEAN_LATENCY): "" when names holds none.
func fieldsHint(names []string) string {
	var ours []string
	found := false
	for _, n := range names {
		if f, ok := netperfFields[strings.ToUpper(strings.TrimSpace(n))]; ok && f != "" {
			ours, found = append(ours, f), true
			continue
		}
		ours = append(ours, n)
	}
	if !found {
		return ""
	}
	return "; netperf's output selectors are --fields here: --fields " + strings.Join(ours, ",")
}
