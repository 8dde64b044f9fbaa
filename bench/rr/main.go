// Command rr compares wirespeed's request/response loop with sockperf's
// and qperf's ping-pong on loopback, TCP and UDP, one transaction in
// flight, the tools alternating in rounds, with the same message size. It
// prints transactions per second and round-trip latency per tool, and the
// ratios of wirespeed to the best of the others.
//
//	go build -o /tmp/wirespeed ./cmd/wirespeed
//	go run ./bench/rr -wirespeed /tmp/wirespeed
//
// sockperf reports the full round trip with --full-rtt and its percentiles;
// qperf reports only the mean one-way latency, so its round trip is twice
// that and its rate is taken as one over the round trip. Needs sockperf
// and qperf (Debian packages of those names). Every server listens on
// 127.0.0.1 only.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"wirespeed/bench/internal/benchutil"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rr:", err)
		os.Exit(1)
	}
}

type result struct {
	tps, p50, mean float64 // transactions/s, round trip in microseconds
}

func run() error {
	wsBin := flag.String("wirespeed", "wirespeed", "wirespeed binary")
	rounds := flag.Int("rounds", 3, "alternating rounds")
	length := flag.Duration("length", 5*time.Second, "length of each run")
	size := flag.Int("size", 14, "request and response size in bytes (sockperf needs 14 or more)")
	flag.Parse()
	secs := strconv.FormatFloat(length.Seconds(), 'f', -1, 64)
	sz := strconv.Itoa(*size)

	wsPort, spPort, qpPort := benchutil.FreePort(), benchutil.FreePort(), benchutil.FreePort()
	ws, err := benchutil.Start(*wsBin, "serve", "--listen", "127.0.0.1:"+wsPort, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer ws.Stop()
	qp, err := benchutil.Start("qperf", "--listen_port", qpPort)
	if err != nil {
		return err
	}
	defer qp.Stop()

	fmt.Printf("# ping-pong on loopback, %d-byte messages, %s per run, %d rounds; latency is the round trip in microseconds\n", *size, *length, *rounds)
	fmt.Printf("%-4s %-10s %5s %14s %10s %10s\n", "prot", "tool", "round", "trans/s", "p50 us", "mean us")
	for _, proto := range []string{"tcp", "udp"} {
		spArgs := []string{"server", "-i", "127.0.0.1", "-p", spPort}
		if proto == "tcp" {
			spArgs = append(spArgs, "--tcp")
		}
		sp, err := benchutil.Start("sockperf", spArgs...)
		if err != nil {
			return err
		}
		all := map[string][]result{}
		for r := 1; r <= *rounds; r++ {
			for _, tool := range []string{"wirespeed", "sockperf", "qperf"} {
				var res result
				var err error
				switch tool {
				case "wirespeed":
					res, err = wirespeed(*wsBin, "127.0.0.1:"+wsPort, strings.ToUpper(proto)+"_RR", sz, secs)
				case "sockperf":
					res, err = sockperf(proto, spPort, sz, secs)
				case "qperf":
					res, err = qperf(proto, qpPort, sz, secs)
				}
				if err != nil {
					sp.Stop()
					return err
				}
				all[tool] = append(all[tool], res)
				fmt.Printf("%-4s %-10s %5d %14.0f %10.2f %10.2f\n", proto, tool, r, res.tps, res.p50, res.mean)
			}
		}
		sp.Stop()
		med := func(tool string, f func(result) float64) float64 {
			var v []float64
			for _, r := range all[tool] {
				v = append(v, f(r))
			}
			return benchutil.Median(v)
		}
		tps := func(r result) float64 { return r.tps }
		p50 := func(r result) float64 { return r.p50 }
		bestTPS := max(med("sockperf", tps), med("qperf", tps))
		fmt.Printf("%s medians: wirespeed %.0f trans/s p50 %.2f us; sockperf %.0f trans/s p50 %.2f us; qperf %.0f trans/s (mean-based)\n",
			proto, med("wirespeed", tps), med("wirespeed", p50), med("sockperf", tps), med("sockperf", p50), med("qperf", tps))
		fmt.Printf("%s ratios: trans/s wirespeed/best-other %.3f; p50 wirespeed/sockperf %.3f (below 1 is better)\n\n",
			proto, med("wirespeed", tps)/bestTPS, med("wirespeed", p50)/med("sockperf", p50))
	}
	return nil
}

func wirespeed(bin, addr, kind, size, secs string) (result, error) {
	var doc struct {
		Summary struct {
			TPS     float64 `json:"transactions_per_s"`
			Latency struct {
				P50  float64 `json:"p50"`
				Mean float64 `json:"mean"`
			} `json:"latency_us"`
		}
	}
	err := benchutil.JSON(&doc, bin, "run", addr, "-t", kind, "-r", size+","+size, "-l", secs, "-i", "0", "--json")
	return result{tps: doc.Summary.TPS, p50: doc.Summary.Latency.P50, mean: doc.Summary.Latency.Mean}, err
}

var (
	spValid = regexp.MustCompile(`\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)`)
	spP50   = regexp.MustCompile(`percentile 50\.000 =\s*([0-9.]+)`)
	spMean  = regexp.MustCompile(`avg-rtt=([0-9.]+)`)
	qpLat   = regexp.MustCompile(`latency\s*=\s*([0-9.]+)\s*(ns|us|ms)`)
)

func sockperf(proto, port, size, secs string) (result, error) {
	args := []string{"ping-pong", "-i", "127.0.0.1", "-p", port, "-t", secs, "-m", size, "--full-rtt"}
	if proto == "tcp" {
		args = append(args, "--tcp")
	}
	out, err := benchutil.Output("sockperf", args...)
	if err != nil {
		return result{}, err
	}
	v, p, m := spValid.FindSubmatch(out), spP50.FindSubmatch(out), spMean.FindSubmatch(out)
	if v == nil || p == nil || m == nil {
		return result{}, fmt.Errorf("sockperf output not understood:\n%s", out)
	}
	runtime, _ := strconv.ParseFloat(string(v[1]), 64)
	recv, _ := strconv.ParseFloat(string(v[2]), 64)
	p50, _ := strconv.ParseFloat(string(p[1]), 64)
	mean, _ := strconv.ParseFloat(string(m[1]), 64)
	return result{tps: recv / runtime, p50: p50, mean: mean}, nil
}

func qperf(proto, port, size, secs string) (result, error) {
	out, err := benchutil.Output("qperf", "-lp", port, "-t", secs, "-m", size, "127.0.0.1", proto+"_lat")
	if err != nil {
		return result{}, err
	}
	m := qpLat.FindSubmatch(out)
	if m == nil {
		return result{}, fmt.Errorf("qperf output not understood:\n%s", out)
	}
	lat, _ := strconv.ParseFloat(string(m[1]), 64)
	switch string(m[2]) {
	case "ns":
		lat /= 1e3
	case "ms":
		lat *= 1e3
	}
	rtt := 2 * lat
	return result{tps: 1e6 / rtt, p50: 0, mean: rtt}, nil
}
