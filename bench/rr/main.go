// Command rr compares wirespeed's request/response tests with netperf's on
// loopback, and with sockperf's and qperf's ping-pong where they fit:
// TCP_RR and TCP_CRR at each congestion control, and UDP_RR, one
// transaction in flight, the same request and response size for every
// tool (wirespeed -r S,S, netperf -- -r S,S, sockperf -m S, qperf -m S),
// and the same congestion control (wirespeed --cc, netperf -- -K).
// wirespeed's UDP_RR sockets are connected and netperf's are not: with
// -- -n -N netperf's UDP_RR fails now and then with "Connection refused"
// (its first request can reach the server before the server's socket is
// there), so it runs with its default.
//
// Figures: transactions per second, p50 and p99 of the round trip in
// microseconds (netperf -j with the P50_LATENCY and P99_LATENCY output
// selectors), and service demand on both sides in CPU microseconds per
// transaction (netperf -c -C; wirespeed's local_cpu and remote_cpu). For
// latency and service demand a ratio below 1 means wirespeed is better.
// sockperf reports the full round trip with --full-rtt and its p50 and
// p99 (it needs 14-byte messages or more, so it runs only when -size is
// at least 14); qperf reports only the mean one-way latency, so its rate is
// taken as one over twice that.
//
// Rounds, order and the table are those of bench/tcpstream.
//
//	go build -o /tmp/wirespeed ./cmd/wirespeed
//	go run ./bench/rr -wirespeed /tmp/wirespeed
//
// netperf and netserver are found on PATH (or -netperf PATH); sockperf
// and qperf on PATH (Debian packages of those names). A missing tool is
// skipped with a message. Every server listens on 127.0.0.1 only.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"wirespeed/bench/internal/benchutil"
)

func main() {
	err := run(os.Stdout, os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rr:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("rr", flag.ContinueOnError)
	wsFlag := fs.String("wirespeed", "wirespeed", "wirespeed binary (path or name on PATH)")
	npFlag := fs.String("netperf", "netperf", "netperf binary (path or name on PATH); netserver is looked for beside it, then on PATH")
	spFlag := fs.String("sockperf", "sockperf", "sockperf binary (path or name on PATH)")
	qpFlag := fs.String("qperf", "qperf", "qperf binary (path or name on PATH)")
	tests := fs.String("tests", "TCP_RR,UDP_RR,TCP_CRR", "tests to run")
	ccs := fs.String("cc", "cubic,bbr", "congestion controls for the TCP tests, a row each, the same for every tool")
	size := fs.Int("size", 1, "request and response size in bytes")
	rounds := benchutil.RegisterRounds(fs)
	if err := fs.Parse(args); err != nil {
		return err // the flag package has printed what is wrong
	}
	if *size < 1 {
		return fmt.Errorf("-size %d: want at least 1", *size)
	}
	ord, err := rounds.Check()
	if err != nil {
		return err
	}
	secs := strconv.FormatFloat(rounds.Length.Seconds(), 'f', -1, 64)
	sz := strconv.Itoa(*size)

	ws, err := benchutil.Find(*wsFlag)
	if err != nil {
		return err
	}
	srvs, err := benchutil.StartServers(w, ws, *npFlag, "", false)
	if err != nil {
		return err
	}
	defer srvs.Stop()
	wsPort, np := srvs.WSPort, srvs.NP
	// sockperf serves one protocol per process: a server for each.
	sp, err := benchutil.Find(*spFlag)
	spPorts := map[string]string{}
	switch {
	case errors.Is(err, benchutil.ErrSkip):
		fmt.Fprintf(w, "# sockperf skipped: %v (Debian package sockperf)\n", err)
		sp = ""
	case err != nil:
		return err
	case *size < 14:
		fmt.Fprintf(w, "# sockperf skipped: it needs -size 14 or more\n")
		sp = ""
	default:
		for _, proto := range []string{"tcp", "udp"} {
			port, err := benchutil.FreePort()
			if err != nil {
				return err
			}
			a := []string{"server", "-i", "127.0.0.1", "-p", port}
			if proto == "tcp" {
				a = append(a, "--tcp")
			}
			srv, err := benchutil.Start(sp, a...)
			if err != nil {
				return err
			}
			defer srv.Stop()
			spPorts[proto] = port
		}
	}
	var qpPort string
	qp, err := benchutil.Find(*qpFlag)
	switch {
	case errors.Is(err, benchutil.ErrSkip):
		fmt.Fprintf(w, "# qperf skipped: %v (Debian package qperf)\n", err)
		qp = ""
	case err != nil:
		return err
	default:
		if qpPort, err = benchutil.FreePort(); err != nil {
			return err
		}
		// qperf has no option to listen on one address only.
		srv, err := benchutil.Start(qp, "--listen_port", qpPort)
		if err != nil {
			return err
		}
		defer srv.Stop()
	}

	fmt.Fprintf(w, "# request/response on loopback, %d-byte requests and responses, one in flight, %s\n", *size, rounds)
	fmt.Fprintf(w, "# row, round, tool, figures (tps: transactions/s; p50_us, p99_us: round trip; sd_*: service demand, CPU us per transaction), command\n")
	var results []benchutil.Result
	for _, test := range benchutil.List(*tests) {
		var proto string
		switch test {
		case "TCP_RR", "TCP_CRR":
			proto = "tcp"
		case "UDP_RR":
			proto = "udp"
		default:
			return fmt.Errorf("-tests: %q is not TCP_RR, UDP_RR or TCP_CRR", test)
		}
		ccList := benchutil.List(*ccs)
		if proto == "udp" {
			ccList = []string{""}
		}
		for _, cc := range ccList {
			row := benchutil.Row{Name: strings.TrimSpace(fmt.Sprintf("%s %s,%s %s", test, sz, sz, cc))}
			wsArgs := []string{ws, "run", "127.0.0.1:" + wsPort, "-t", test, "-r", sz + "," + sz, "-l", secs, "-i", "0", "--json"}
			spec := []string{"-r", sz + "," + sz}
			if cc != "" {
				wsArgs = append(wsArgs, "--cc", cc)
				spec = append(spec, "-K", cc+","+cc)
			}
			row.Tools = append(row.Tools, benchutil.Tool{Name: "wirespeed", Argv: wsArgs, Parse: parseWirespeed})
			if np != nil {
				row.Tools = append(row.Tools, benchutil.Tool{Name: "netperf",
					Argv: np.Argv(test, secs, []string{"-j", "-c", "-C"}, spec,
						[]string{"TRANSACTION_RATE", "P50_LATENCY", "P99_LATENCY", "LOCAL_SD", "REMOTE_SD", "SD_UNITS"}),
					Parse: parseNetperf})
				row.Ratios = append(row.Ratios, benchutil.Ratio{Num: "wirespeed", Den: "netperf"})
			}
			// sockperf and qperf have no connection-per-transaction test
			// and no congestion control option: they join the rows of the
			// system's default only when it is the one asked for.
			if test != "TCP_CRR" && sp != "" {
				a := []string{sp, "ping-pong", "-i", "127.0.0.1", "-p", spPorts[proto], "-t", secs, "-m", sz, "--full-rtt"}
				if proto == "tcp" {
					a = append(a, "--tcp")
				}
				row.Tools = append(row.Tools, benchutil.Tool{Name: "sockperf", Argv: a, Parse: parseSockperf})
				row.Ratios = append(row.Ratios, benchutil.Ratio{Num: "wirespeed", Den: "sockperf"})
			}
			if test != "TCP_CRR" && qp != "" {
				row.Tools = append(row.Tools, benchutil.Tool{Name: "qperf",
					Argv: []string{qp, "-lp", qpPort, "-t", secs, "-m", sz, "127.0.0.1", proto + "_lat"}, Parse: parseQperf})
				row.Ratios = append(row.Ratios, benchutil.Ratio{Num: "wirespeed", Den: "qperf"})
			}
			res, err := benchutil.RunRow(w, row, rounds.Pairs, ord)
			if err != nil {
				return err
			}
			results = append(results, res)
		}
	}
	fmt.Fprintln(w)
	benchutil.Table(w, results, []benchutil.Metric{
		{Key: "tps", Label: "transactions/s", Scale: 1, Digits: 0},
		{Key: "p50_us", Label: "p50 us (lower is better)", Scale: 1, Digits: 1},
		{Key: "p99_us", Label: "p99 us (lower is better)", Scale: 1, Digits: 1},
		{Key: "sd_local", Label: "local SD us/tr (lower is better)", Scale: 1, Digits: 2},
		{Key: "sd_remote", Label: "remote SD us/tr (lower is better)", Scale: 1, Digits: 2},
	})
	return nil
}

func parseWirespeed(out []byte) (benchutil.Figures, error) {
	d, err := benchutil.ParseWirespeed(out)
	if err != nil {
		return nil, err
	}
	s := d.Summary
	if s.RRSummary == nil {
		return nil, fmt.Errorf("wirespeed output has no transactions")
	}
	_, local := benchutil.ServiceDemand(s.LocalCPU)
	_, remote := benchutil.ServiceDemand(s.RemoteCPU)
	return benchutil.Figures{"tps": s.TransactionsPerSecond, "p50_us": s.Latency.P50, "p99_us": s.Latency.P99,
		"sd_local": local, "sd_remote": remote}, nil
}

func parseNetperf(out []byte) (benchutil.Figures, error) {
	m := benchutil.KeyVal(out)
	if err := benchutil.Need(m, "TRANSACTION_RATE", "P50_LATENCY", "P99_LATENCY", "LOCAL_SD", "REMOTE_SD"); err != nil {
		return nil, err
	}
	return benchutil.Figures{"tps": m["TRANSACTION_RATE"], "p50_us": m["P50_LATENCY"], "p99_us": m["P99_LATENCY"],
		"sd_local": m["LOCAL_SD"], "sd_remote": m["REMOTE_SD"]}, nil
}

var (
	spValid = regexp.MustCompile(`\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)`)
	spP50   = regexp.MustCompile(`percentile 50\.000 =\s*([0-9.]+)`)
	spP99   = regexp.MustCompile(`percentile 99\.000 =\s*([0-9.]+)`)
	qpLat   = regexp.MustCompile(`latency\s*=\s*([0-9.]+)\s*(ns|us|ms)`)
)

func parseSockperf(out []byte) (benchutil.Figures, error) {
	v, p50, p99 := spValid.FindSubmatch(out), spP50.FindSubmatch(out), spP99.FindSubmatch(out)
	if v == nil || p50 == nil || p99 == nil {
		return nil, fmt.Errorf("sockperf output not understood")
	}
	runtime, _ := strconv.ParseFloat(string(v[1]), 64)
	recv, _ := strconv.ParseFloat(string(v[2]), 64)
	if runtime <= 0 {
		return nil, fmt.Errorf("sockperf ran for %v s", runtime)
	}
	f := benchutil.Figures{"tps": recv / runtime}
	f["p50_us"], _ = strconv.ParseFloat(string(p50[1]), 64)
	f["p99_us"], _ = strconv.ParseFloat(string(p99[1]), 64)
	return f, nil
}

func parseQperf(out []byte) (benchutil.Figures, error) {
	m := qpLat.FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("qperf output not understood")
	}
	lat, _ := strconv.ParseFloat(string(m[1]), 64)
	switch string(m[2]) {
	case "ns":
		lat /= 1e3
	case "ms":
		lat *= 1e3
	}
	if lat <= 0 {
		return nil, fmt.Errorf("qperf latency %v", lat)
	}
	return benchutil.Figures{"tps": 1e6 / (2 * lat)}, nil
}
