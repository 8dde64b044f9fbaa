// Command tcpstream compares wirespeed with netperf and iperf3 on
// loopback: TCP_STREAM and TCP_MAERTS at several message sizes and
// congestion controls, with the same settings for every tool:
//
//   - send and receive sizes: wirespeed -m S -M S, netperf -- -m S,S -M S,S,
//     iperf3 -l S (iperf3 reads in calls of its send size);
//   - socket buffers: the system's defaults for all, unless -sockbuf sets
//     one size for all (wirespeed -s/-S, netperf -- -s/-S, iperf3 -w);
//   - congestion control: wirespeed --cc, netperf -- -K, iperf3 -C.
//
// A fourth column, "wirespeed own defaults", runs wirespeed with its own
// receive size (128K per read whatever the send size); it is labelled and
// never the headline. With -hot, a column "wirespeed --payload hot" runs
// it with the cache-hot payload (random bytes in a ring of up to 24 KiB,
// which repeat within a compressor's window: the default payload's
// incompressible ring is at least 64 KiB), labelled too, compared with
// netperf, whose send buffers are as small.
//
// Each row runs every tool once per round, -pairs rounds, the order
// alternating (ABBA: forward in odd rounds, backward in even ones) or
// random per round (-order random). Every run prints its figures and its
// exact command; at the end a Markdown table gives, per row, each tool's
// median and the median of the per-round ratios with their interquartile
// range and minimum and maximum, then the commands.
//
//	go build -o /tmp/wirespeed ./cmd/wirespeed
//	go run ./bench/tcpstream -wirespeed /tmp/wirespeed
//
// netperf and netserver are found on PATH (or -netperf PATH, netserver
// beside it); iperf3 on PATH (or -iperf3). A missing tool is skipped with
// a message. Every server listens on 127.0.0.1 only; netserver is started
// on a free port and stopped at the end.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"wirespeed/bench/internal/benchutil"
)

func main() {
	err := run(os.Stdout, os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tcpstream:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("tcpstream", flag.ContinueOnError)
	wsFlag := fs.String("wirespeed", "wirespeed", "wirespeed binary (path or name on PATH)")
	npFlag := fs.String("netperf", "netperf", "netperf binary (path or name on PATH); netserver is looked for beside it, then on PATH")
	ipFlag := fs.String("iperf3", "iperf3", "iperf3 binary (path or name on PATH)")
	tests := fs.String("tests", "TCP_STREAM,TCP_MAERTS", "tests to run")
	sizes := fs.String("sizes", "64,1K,8K,64K,128K", "message sizes: send and receive size for every tool")
	ccs := fs.String("cc", "cubic,bbr", "congestion controls, a row each, the same for every tool")
	sockbuf := fs.String("sockbuf", "0", "socket buffer size for every tool on both sides (0: the system's defaults)")
	rounds := benchutil.RegisterRounds(fs)
	noDefaults := fs.Bool("no-own-defaults", false, "leave out the wirespeed own defaults column")
	hot := fs.Bool("hot", false, "add a labelled column \"wirespeed --payload hot\": the cache-hot, compressible payload")
	if err := fs.Parse(args); err != nil {
		return err // the flag package has printed what is wrong
	}
	ord, err := rounds.Check()
	if err != nil {
		return err
	}
	buf := 0
	if *sockbuf != "0" {
		if buf, err = benchutil.Size(*sockbuf); err != nil {
			return err
		}
	}
	ws, err := benchutil.Find(*wsFlag)
	if err != nil {
		return err
	}
	srvs, err := benchutil.StartServers(w, ws, *npFlag, *ipFlag, true)
	if err != nil {
		return err
	}
	defer srvs.Stop()
	wsPort, np, ip, ipPort := srvs.WSPort, srvs.NP, srvs.IP, srvs.IPPort

	secs := strconv.FormatFloat(rounds.Length.Seconds(), 'f', -1, 64)
	bufNote := "system defaults"
	if buf > 0 {
		bufNote = strconv.Itoa(buf) + " bytes asked for by every tool"
	}
	fmt.Fprintf(w, "# TCP stream tests on loopback, %s; socket buffers: %s\n", rounds, bufNote)
	fmt.Fprintf(w, "# row, round, tool, figures (bps: receiver's bits/s; sd_*: service demand, CPU us per KB), command\n")

	var results []benchutil.Result
	for _, test := range benchutil.List(*tests) {
		if test != "TCP_STREAM" && test != "TCP_MAERTS" {
			return fmt.Errorf("-tests: %q is not TCP_STREAM or TCP_MAERTS", test)
		}
		for _, cc := range benchutil.List(*ccs) {
			for _, s := range benchutil.List(*sizes) {
				n, err := benchutil.Size(s)
				if err != nil {
					return err
				}
				size := strconv.Itoa(n)
				row := benchutil.Row{Name: fmt.Sprintf("%s -m %s %s", test, s, cc)}
				wsArgs := []string{ws, "run", "127.0.0.1:" + wsPort, "-t", test, "-l", secs, "-i", "0", "--json", "--cc", cc, "-m", size}
				if buf > 0 {
					wsArgs = append(wsArgs, "-s", strconv.Itoa(buf), "-S", strconv.Itoa(buf))
				}
				row.Tools = append(row.Tools, benchutil.Tool{Name: "wirespeed", Argv: append(append([]string(nil), wsArgs...), "-M", size), Parse: parseWirespeed})
				if np != nil {
					spec := []string{"-m", size + "," + size, "-M", size + "," + size, "-K", cc + "," + cc}
					if buf > 0 {
						b := strconv.Itoa(buf)
						spec = append(spec, "-s", b+","+b, "-S", b+","+b)
					}
					row.Tools = append(row.Tools, benchutil.Tool{Name: "netperf",
						Argv:  np.Argv(test, secs, []string{"-c", "-C"}, spec, []string{"THROUGHPUT", "THROUGHPUT_UNITS", "LOCAL_SD", "REMOTE_SD"}),
						Parse: parseNetperf})
					row.Ratios = append(row.Ratios, benchutil.Ratio{Num: "wirespeed", Den: "netperf"})
				}
				if ip != "" {
					a := []string{ip, "-c", "127.0.0.1", "-p", ipPort, "-t", secs, "-l", size, "-C", cc, "-J"}
					if test == "TCP_MAERTS" {
						a = append(a, "-R")
					}
					if buf > 0 {
						a = append(a, "-w", strconv.Itoa(buf))
					}
					row.Tools = append(row.Tools, benchutil.Tool{Name: "iperf3", Argv: a, Parse: parseIperf3})
					row.Ratios = append(row.Ratios, benchutil.Ratio{Num: "wirespeed", Den: "iperf3"})
				}
				if *hot {
					const name = "wirespeed --payload hot"
					argv := append(append([]string(nil), wsArgs...), "-M", size, "--payload", "hot")
					row.Tools = append(row.Tools, benchutil.Tool{Name: name, Argv: argv, Parse: parseWirespeed})
					if len(row.Tools) > 2 {
						row.Ratios = append(row.Ratios, benchutil.Ratio{Num: name, Den: row.Tools[1].Name})
					}
				}
				if !*noDefaults {
					const own = "wirespeed own defaults (-M 128K)"
					row.Tools = append(row.Tools, benchutil.Tool{Name: own, Argv: wsArgs, Parse: parseWirespeed})
					if len(row.Tools) > 2 {
						row.Ratios = append(row.Ratios, benchutil.Ratio{Num: own, Den: row.Tools[1].Name})
					}
				}
				res, err := benchutil.RunRow(w, row, rounds.Pairs, ord)
				if err != nil {
					return err
				}
				results = append(results, res)
			}
		}
	}
	fmt.Fprintln(w)
	benchutil.Table(w, results, []benchutil.Metric{
		{Key: "bps", Label: "Gbit/s", Scale: 1e9, Digits: 2},
		{Key: "sd_local", Label: "local SD us/KB", Scale: 1, Digits: 3},
		{Key: "sd_remote", Label: "remote SD us/KB", Scale: 1, Digits: 3},
	})
	return nil
}

func parseWirespeed(out []byte) (benchutil.Figures, error) {
	d, err := benchutil.ParseWirespeed(out)
	if err != nil {
		return nil, err
	}
	s := d.Summary
	local, _ := benchutil.ServiceDemand(s.LocalCPU)
	remote, _ := benchutil.ServiceDemand(s.RemoteCPU)
	return benchutil.Figures{"bps": s.BitsPerSecond, "sd_local": local, "sd_remote": remote}, nil
}

func parseNetperf(out []byte) (benchutil.Figures, error) {
	m := benchutil.KeyVal(out)
	if err := benchutil.Need(m, "THROUGHPUT", "LOCAL_SD", "REMOTE_SD"); err != nil {
		return nil, err
	}
	// THROUGHPUT_UNITS is 10^6bits/s by default (-f m).
	return benchutil.Figures{"bps": m["THROUGHPUT"] * 1e6, "sd_local": m["LOCAL_SD"], "sd_remote": m["REMOTE_SD"]}, nil
}

func parseIperf3(out []byte) (benchutil.Figures, error) {
	var doc struct {
		End struct {
			SumReceived struct {
				BPS float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		}
	}
	if err := benchutil.DecodeJSON(out, &doc); err != nil {
		return nil, err
	}
	return benchutil.Figures{"bps": doc.End.SumReceived.BPS}, nil
}
