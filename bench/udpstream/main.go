// Command udpstream compares wirespeed with iperf3 on loopback: UDP_STREAM
// as fast as possible (-b 0) at several datagram sizes, the two tools
// alternating in pairs, and prints the datagrams per second each
// receiver got and, per size, the median over the pairs of the ratio
// wirespeed/iperf3.
//
//	go build -o /tmp/wirespeed ./cmd/wirespeed
//	go run ./bench/udpstream -wirespeed /tmp/wirespeed
//
// Both servers run on 127.0.0.1 only. Needs iperf3 (Debian package iperf3).
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"wirespeed/bench/internal/benchutil"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "udpstream:", err)
		os.Exit(1)
	}
}

func run() error {
	wsBin := flag.String("wirespeed", "wirespeed", "wirespeed binary")
	ipBin := flag.String("iperf3", "iperf3", "iperf3 binary")
	sizes := flag.String("sizes", "64,1472", "datagram payload sizes")
	pairs := flag.Int("pairs", 3, "alternating pairs per size")
	length := flag.Duration("length", 5*time.Second, "length of each run")
	flag.Parse()

	wsPort, ipPort := benchutil.FreePort(), benchutil.FreePort()
	ws, err := benchutil.Start(*wsBin, "serve", "--listen", "127.0.0.1:"+wsPort, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer ws.Stop()
	ip, err := benchutil.Start(*ipBin, "-s", "-B", "127.0.0.1", "-p", ipPort)
	if err != nil {
		return err
	}
	defer ip.Stop()

	secs := strconv.FormatFloat(length.Seconds(), 'f', -1, 64)
	fmt.Printf("# UDP_STREAM -b 0 on loopback, %s per run, %d alternating pairs: datagrams per second received\n", length, *pairs)
	fmt.Printf("%-6s %-5s %14s %14s %14s %14s %8s\n", "size", "pair", "wirespeed rx", "(sent)", "iperf3 rx", "(sent)", "ratio")
	type row struct {
		size   string
		ws, ip []float64
		ratios []float64
	}
	var rows []row
	for _, size := range strings.Split(*sizes, ",") {
		r := row{size: size}
		n, _ := strconv.Atoi(size)
		for p := 1; p <= *pairs; p++ {
			var w struct {
				Summary struct {
					Elapsed  float64 `json:"elapsed_s"`
					SElapsed float64 `json:"sender_elapsed_s"`
					Received int64   `json:"packets_received"`
					Sent     int64   `json:"packets_sent"`
				}
			}
			if err := benchutil.JSON(&w, *wsBin, "run", "127.0.0.1:"+wsPort, "-t", "UDP_STREAM", "-b", "0", "-m", size, "-l", secs, "-i", "0", "--json"); err != nil {
				return err
			}
			var i struct {
				End struct {
					Sent struct {
						Seconds float64 `json:"seconds"`
						Packets int64   `json:"packets"`
					} `json:"sum_sent"`
					Received struct {
						Seconds float64 `json:"seconds"`
						Bytes   int64   `json:"bytes"`
					} `json:"sum_received"`
				}
			}
			if err := benchutil.JSON(&i, *ipBin, "-c", "127.0.0.1", "-p", ipPort, "-u", "-b", "0", "-l", size, "-t", secs, "-J"); err != nil {
				return err
			}
			// wirespeed's received count includes datagrams that arrived
			// while the receiver drained; over the window it is within a
			// few of it. iperf3 counts received bytes.
			wsRx := float64(w.Summary.Received) / w.Summary.Elapsed
			wsTx := float64(w.Summary.Sent) / w.Summary.SElapsed
			ipRx := float64(i.End.Received.Bytes) / float64(n) / i.End.Received.Seconds
			ipTx := float64(i.End.Sent.Packets) / i.End.Sent.Seconds
			r.ws, r.ip, r.ratios = append(r.ws, wsRx), append(r.ip, ipRx), append(r.ratios, wsRx/ipRx)
			fmt.Printf("%-6s %-5d %10.0f pps %10.0f pps %10.0f pps %10.0f pps %8.3f\n", size, p, wsRx, wsTx, ipRx, ipTx, wsRx/ipRx)
		}
		rows = append(rows, r)
	}
	fmt.Println()
	fmt.Printf("%-6s %18s %18s %14s\n", "size", "wirespeed median", "iperf3 median", "median ratio")
	for _, r := range rows {
		fmt.Printf("%-6s %14.0f pps %14.0f pps %14.3f\n", r.size, benchutil.Median(r.ws), benchutil.Median(r.ip), benchutil.Median(r.ratios))
	}
	return nil
}
