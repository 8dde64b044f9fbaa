// Command udpstream compares wirespeed with netperf and iperf3 on
// loopback: UDP_STREAM as fast as possible at several datagram sizes,
// in datagrams per second received (netperf's remote, receiving side),
// with the same settings for every tool:
//
//   - datagram and receive size: wirespeed -m S -M S, netperf -- -m S,S
//     -M S,S, iperf3 -l S;
//   - connected UDP sockets on both sides: wirespeed and iperf3 connect
//     theirs, netperf does with -- -n -N;
//   - socket buffers: the system's defaults for all, unless -sockbuf sets
//     one size for all. wirespeed's UDP receiver asks for 4 MiB of its own
//     accord, so to leave it at the system's default the bench asks for
//     what the kernel grants by default (half net.core.rmem_default, which
//     the kernel doubles) with -s and -S; the run's JSON records what was
//     granted.
//
// Like netperf and iperf3, wirespeed makes one send call per datagram and
// one receive call per datagram by default; the headline "wirespeed"
// column runs it so. Labelled columns, never the headline, run it with
// what differs from the others:
//
//   - "wirespeed --send-batch N": N datagrams per sendmmsg call (-send-batch,
//     64 by default; 0 leaves the column out);
//   - "wirespeed --recv-batch N": up to N datagrams per recvmmsg call
//     (-recv-batch, 64 by default; 0 leaves it out);
//   - "wirespeed --rx-timestamp kernel": arrivals timed by the kernel's
//     stamp per datagram (recvmsg with a control message) instead of the
//     default clock read per receive call (recvfrom), as iperf3 times
//     them; compared with iperf3 (-no-kernel-stamps leaves it out);
//   - "wirespeed own defaults": its own receive size and 4 MiB receive
//     buffer (-no-own-defaults leaves it out).
//
// The table shows wirespeed's datagrams per send and per receive call
// (ws_tx_per_call, ws_rx_per_call), from its own call counters.
//
// Rounds, order and the table are those of bench/tcpstream.
//
//	go build -o /tmp/wirespeed ./cmd/wirespeed
//	go run ./bench/udpstream -wirespeed /tmp/wirespeed
//
// netperf and netserver are found on PATH (or -netperf PATH); iperf3 on
// PATH (or -iperf3). A missing tool is skipped with a message. Every
// server listens on 127.0.0.1 only.
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
		fmt.Fprintln(os.Stderr, "udpstream:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("udpstream", flag.ContinueOnError)
	wsFlag := fs.String("wirespeed", "wirespeed", "wirespeed binary (path or name on PATH)")
	npFlag := fs.String("netperf", "netperf", "netperf binary (path or name on PATH); netserver is looked for beside it, then on PATH")
	ipFlag := fs.String("iperf3", "iperf3", "iperf3 binary (path or name on PATH)")
	sizes := fs.String("sizes", "64,1472", "datagram payload sizes")
	sockbuf := fs.String("sockbuf", "0", "socket buffer size for every tool on both sides (0: the system's defaults)")
	rounds := benchutil.RegisterRounds(fs)
	noDefaults := fs.Bool("no-own-defaults", false, "leave out the wirespeed own defaults column")
	sendBatch := fs.Int("send-batch", 64, "datagrams per sendmmsg call of the labelled \"wirespeed --send-batch\" column (0: leave it out)")
	recvBatch := fs.Int("recv-batch", 64, "datagrams per recvmmsg call of the labelled \"wirespeed --recv-batch\" column (0: leave it out)")
	noKernelStamps := fs.Bool("no-kernel-stamps", false, "leave out the \"wirespeed --rx-timestamp kernel\" column")
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
	wsBuf := buf
	if wsBuf == 0 {
		if wsBuf, err = benchutil.SystemSockbuf(); err != nil {
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
	bufNote := fmt.Sprintf("system defaults (wirespeed asks for %d, what the kernel grants by default)", wsBuf)
	if buf > 0 {
		bufNote = strconv.Itoa(buf) + " bytes asked for by every tool"
	}
	fmt.Fprintf(w, "# UDP_STREAM as fast as possible on loopback, %s; socket buffers: %s\n", rounds, bufNote)
	fmt.Fprintf(w, "# row, round, tool, figures (rx_pps/tx_pps: datagrams/s received/sent; sd_*: service demand, CPU us per KB), command\n")

	var results []benchutil.Result
	for _, s := range benchutil.List(*sizes) {
		n, err := benchutil.Size(s)
		if err != nil {
			return err
		}
		size := strconv.Itoa(n)
		row := benchutil.Row{Name: "UDP_STREAM -m " + s}
		wsArgs := []string{ws, "run", "127.0.0.1:" + wsPort, "-t", "UDP_STREAM", "-b", "0", "-l", secs, "-i", "0", "--json", "-m", size}
		matched := append(append([]string(nil), wsArgs...), "-M", size, "-s", strconv.Itoa(wsBuf), "-S", strconv.Itoa(wsBuf))
		row.Tools = append(row.Tools, benchutil.Tool{Name: "wirespeed", Argv: matched, Parse: parseWirespeed(n)})
		if np != nil {
			// -n -N: connected UDP sockets on both sides, as wirespeed's
			// and iperf3's are.
			spec := []string{"-m", size + "," + size, "-M", size + "," + size, "-n", "-N"}
			if buf > 0 {
				b := strconv.Itoa(buf)
				spec = append(spec, "-s", b+","+b, "-S", b+","+b)
			}
			row.Tools = append(row.Tools, benchutil.Tool{Name: "netperf",
				Argv:  np.Argv("UDP_STREAM", secs, []string{"-c", "-C"}, spec, []string{"THROUGHPUT", "THROUGHPUT_UNITS", "LOCAL_SEND_CALLS", "ELAPSED_TIME", "LOCAL_SD", "REMOTE_SD"}),
				Parse: parseNetperf(n)})
			row.Ratios = append(row.Ratios, benchutil.Ratio{Num: "wirespeed", Den: "netperf"})
		}
		if ip != "" {
			a := []string{ip, "-c", "127.0.0.1", "-p", ipPort, "-u", "-b", "0", "-l", size, "-t", secs, "-J"}
			if buf > 0 {
				a = append(a, "-w", strconv.Itoa(buf))
			}
			row.Tools = append(row.Tools, benchutil.Tool{Name: "iperf3", Argv: a, Parse: parseIperf3(n)})
			row.Ratios = append(row.Ratios, benchutil.Ratio{Num: "wirespeed", Den: "iperf3"})
		}
		// Labelled columns, compared with netperf: what wirespeed can do
		// that the others' one call per datagram does not.
		den := ""
		if len(row.Tools) > 1 {
			den = row.Tools[1].Name
		}
		for _, b := range []struct {
			flag string
			n    int
		}{{"--send-batch", *sendBatch}, {"--recv-batch", *recvBatch}} {
			if b.n <= 1 {
				continue
			}
			name := fmt.Sprintf("wirespeed %s %d", b.flag, b.n)
			argv := append(append([]string(nil), matched...), b.flag, strconv.Itoa(b.n))
			row.Tools = append(row.Tools, benchutil.Tool{Name: name, Argv: argv, Parse: parseWirespeed(n)})
			if den != "" {
				row.Ratios = append(row.Ratios, benchutil.Ratio{Num: name, Den: den})
			}
		}
		if !*noKernelStamps {
			const name = "wirespeed --rx-timestamp kernel"
			argv := append(append([]string(nil), matched...), "--rx-timestamp", "kernel")
			row.Tools = append(row.Tools, benchutil.Tool{Name: name, Argv: argv, Parse: parseWirespeed(n)})
			for _, t := range row.Tools {
				if t.Name == "iperf3" {
					row.Ratios = append(row.Ratios, benchutil.Ratio{Num: name, Den: "iperf3"})
				}
			}
		}
		if !*noDefaults {
			const own = "wirespeed own defaults (-M 128K, 4 MiB rcvbuf)"
			row.Tools = append(row.Tools, benchutil.Tool{Name: own, Argv: wsArgs, Parse: parseWirespeed(n)})
			if den != "" {
				row.Ratios = append(row.Ratios, benchutil.Ratio{Num: own, Den: den})
			}
		}
		res, err := benchutil.RunRow(w, row, rounds.Pairs, ord)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	fmt.Fprintln(w)
	benchutil.Table(w, results, []benchutil.Metric{
		{Key: "rx_pps", Label: "received k datagrams/s", Scale: 1e3, Digits: 1},
		{Key: "tx_pps", Label: "sent k datagrams/s", Scale: 1e3, Digits: 1},
		{Key: "sd_local", Label: "local SD us/KB", Scale: 1, Digits: 3},
		{Key: "sd_remote", Label: "remote SD us/KB", Scale: 1, Digits: 3},
		{Key: "ws_tx_per_call", Label: "wirespeed datagrams per send call", Scale: 1, Digits: 1},
		{Key: "ws_rx_per_call", Label: "wirespeed datagrams per receive call", Scale: 1, Digits: 1},
	})
	return nil
}

func parseWirespeed(size int) func([]byte) (benchutil.Figures, error) {
	return func(out []byte) (benchutil.Figures, error) {
		d, err := benchutil.ParseWirespeed(out)
		if err != nil {
			return nil, err
		}
		s := d.Summary
		if s.ElapsedS <= 0 || s.SenderElapsedS <= 0 {
			return nil, fmt.Errorf("wirespeed output has no elapsed time")
		}
		if s.UDPSummary == nil {
			return nil, fmt.Errorf("wirespeed output has no datagram counts")
		}
		local, _ := benchutil.ServiceDemand(s.LocalCPU)
		remote, _ := benchutil.ServiceDemand(s.RemoteCPU)
		f := benchutil.Figures{
			"rx_pps":    float64(s.PacketsReceived) / s.ElapsedS,
			"tx_pps":    float64(s.PacketsSent) / s.SenderElapsedS,
			"sd_local":  local,
			"sd_remote": remote,
		}
		if len(d.Streams) > 0 && d.Streams[0].Sender.Calls > 0 {
			f["ws_tx_per_call"] = float64(d.Streams[0].Sender.Packets) / float64(d.Streams[0].Sender.Calls)
		}
		if len(d.Streams) > 0 && d.Streams[0].Receiver.Calls > 0 {
			f["ws_rx_per_call"] = float64(d.Streams[0].Receiver.Packets) / float64(d.Streams[0].Receiver.Calls)
		}
		return f, nil
	}
}

func parseNetperf(size int) func([]byte) (benchutil.Figures, error) {
	return func(out []byte) (benchutil.Figures, error) {
		m := benchutil.KeyVal(out)
		if err := benchutil.Need(m, "THROUGHPUT", "LOCAL_SEND_CALLS", "ELAPSED_TIME", "LOCAL_SD", "REMOTE_SD"); err != nil {
			return nil, err
		}
		if m["ELAPSED_TIME"] <= 0 {
			return nil, fmt.Errorf("netperf output has no elapsed time")
		}
		// UDP_STREAM's THROUGHPUT is the remote (receiving) side's, in
		// 10^6 bits/s of payload.
		return benchutil.Figures{
			"rx_pps":    m["THROUGHPUT"] * 1e6 / 8 / float64(size),
			"tx_pps":    m["LOCAL_SEND_CALLS"] / m["ELAPSED_TIME"],
			"sd_local":  m["LOCAL_SD"],
			"sd_remote": m["REMOTE_SD"],
		}, nil
	}
}

func parseIperf3(size int) func([]byte) (benchutil.Figures, error) {
	return func(out []byte) (benchutil.Figures, error) {
		var doc struct {
			End struct {
				Sent struct {
					Seconds float64 `json:"seconds"`
					Packets float64 `json:"packets"`
				} `json:"sum_sent"`
				Received struct {
					Seconds float64 `json:"seconds"`
					Bytes   float64 `json:"bytes"`
				} `json:"sum_received"`
			}
		}
		if err := benchutil.DecodeJSON(out, &doc); err != nil {
			return nil, err
		}
		if doc.End.Sent.Seconds <= 0 || doc.End.Received.Seconds <= 0 {
			return nil, fmt.Errorf("iperf3 output has no elapsed time")
		}
		return benchutil.Figures{
			"rx_pps": doc.End.Received.Bytes / float64(size) / doc.End.Received.Seconds,
			"tx_pps": doc.End.Sent.Packets / doc.End.Sent.Seconds,
		}, nil
	}
}
