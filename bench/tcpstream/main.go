// Command tcpstream compares wirespeed with iperf3 on loopback: TCP_STREAM
// at several message sizes, the two tools alternating in pairs so that
// both see the same machine state, with the same congestion control. It
// prints each measurement and, per size, the median over the pairs of the
// ratio wirespeed/iperf3 of the receiver's throughput.
//
//	go build -o /tmp/wirespeed ./cmd/wirespeed
//	go run ./bench/tcpstream -wirespeed /tmp/wirespeed
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
		fmt.Fprintln(os.Stderr, "tcpstream:", err)
		os.Exit(1)
	}
}

func run() error {
	wsBin := flag.String("wirespeed", "wirespeed", "wirespeed binary")
	ipBin := flag.String("iperf3", "iperf3", "iperf3 binary")
	sizes := flag.String("sizes", "1K,8K,128K", "message sizes")
	pairs := flag.Int("pairs", 3, "alternating pairs per size")
	length := flag.Duration("length", 5*time.Second, "length of each run")
	cc := flag.String("cc", "cubic", "congestion control for both tools")
	sameRecv := flag.Bool("same-recv-size", false, "make wirespeed read in -m sized calls as iperf3 does (-M = -m)")
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
	fmt.Printf("# TCP_STREAM on loopback, %s per run, %d alternating pairs, congestion control %s, wirespeed -M %s\n",
		length, *pairs, *cc, map[bool]string{true: "= -m", false: "default (128K)"}[*sameRecv])
	fmt.Printf("%-6s %-5s %14s %14s %8s\n", "size", "pair", "wirespeed", "iperf3", "ratio")
	type row struct {
		size   string
		median float64
		ws, ip []float64
	}
	var rows []row
	for _, size := range strings.Split(*sizes, ",") {
		var ratios, wss, ips []float64
		for p := 1; p <= *pairs; p++ {
			args := []string{"run", "127.0.0.1:" + wsPort, "-l", secs, "-m", size, "--cc", *cc, "--json", "-i", "0"}
			if *sameRecv {
				args = append(args, "-M", size)
			}
			w, err := wirespeed(*wsBin, args)
			if err != nil {
				return err
			}
			i, err := iperf3(*ipBin, []string{"-c", "127.0.0.1", "-p", ipPort, "-t", secs, "-l", size, "-C", *cc, "-J"})
			if err != nil {
				return err
			}
			wss, ips = append(wss, w), append(ips, i)
			ratios = append(ratios, w/i)
			fmt.Printf("%-6s %-5d %9.0f Mb/s %9.0f Mb/s %8.3f\n", size, p, w/1e6, i/1e6, w/i)
		}
		rows = append(rows, row{size, benchutil.Median(ratios), wss, ips})
	}
	fmt.Println()
	fmt.Printf("%-6s %16s %16s %14s\n", "size", "wirespeed median", "iperf3 median", "median ratio")
	for _, r := range rows {
		fmt.Printf("%-6s %11.0f Mb/s %11.0f Mb/s %14.3f\n", r.size, benchutil.Median(r.ws)/1e6, benchutil.Median(r.ip)/1e6, r.median)
	}
	return nil
}

func wirespeed(bin string, args []string) (float64, error) {
	var doc struct {
		Summary struct {
			BPS float64 `json:"throughput_bps"`
		}
	}
	err := benchutil.JSON(&doc, bin, args...)
	return doc.Summary.BPS, err
}

func iperf3(bin string, args []string) (float64, error) {
	var doc struct {
		End struct {
			SumReceived struct {
				BPS float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		}
	}
	err := benchutil.JSON(&doc, bin, args...)
	return doc.End.SumReceived.BPS, err
}
