// Command zerocopy measures what the zero-copy data paths change in
// TCP_STREAM: throughput and service demand (CPU microseconds per KB, on
// both sides) with the payload copied as usual, sent with sendfile(2) or
// MSG_ZEROCOPY, and received with splice(2) or MSG_TRUNC, side by side. It
// runs `wirespeed sweep` over the message sizes once per mode per round,
// the modes in the order -order gives (ABBA by default, or random), and
// prints the median of each figure per mode and size, with each round's
// ratio to plain copying as a median with its spread.
//
//	go build -o /root/bin/wirespeed ./cmd/wirespeed
//	go run ./bench/zerocopy -wirespeed /root/bin/wirespeed             # loopback
//	sudo go run ./bench/zerocopy -wirespeed /root/bin/wirespeed -lab   # two namespaces joined by a veth pair
//
// On loopback both sides are the same host, so the local and remote
// service demands are one machine's CPU seen twice. With -lab the server
// runs in one network namespace and the client in another (needs root);
// it is still one machine's CPUs, but the packets cross a veth pair. In
// both cases the kernel delivers to a local socket, where it copies
// MSG_ZEROCOPY pages after all (each completion says so): the figures show
// the cost of the mechanism, not a NIC's DMA from user pages.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"wirespeed/bench/internal/benchutil"
	"wirespeed/internal/lab"
	"wirespeed/internal/result"
)

// mode is one way of moving the payload.
type mode struct {
	name string
	args []string
}

var modes = []mode{
	{"copy", nil},
	{"sendfile", []string{"--zerocopy", "sendfile"}},
	{"msg", []string{"--zerocopy", "msg"}},
	{"rx=splice", []string{"--rx", "splice"}},
	{"rx=discard", []string{"--rx", "discard"}},
	{"sendfile+splice", []string{"--zerocopy", "sendfile", "--rx", "splice"}},
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "zerocopy:", err)
		os.Exit(1)
	}
}

func run() error {
	wsBin := flag.String("wirespeed", "wirespeed", "wirespeed binary")
	sizes := flag.String("sizes", "8K,64K,128K", "message sizes (sweep --sizes)")
	rounds := benchutil.RegisterRounds(flag.CommandLine)
	pin := flag.String("pin", "", "-T for every run, e.g. 0,1 (default: no pinning)")
	useLab := flag.Bool("lab", false, "run the server and the client in the two namespaces of a lab (needs root)")
	flag.Parse()
	order, err := rounds.Check()
	if err != nil {
		return err
	}
	bin, err := filepath.Abs(*wsBin)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath(bin); err != nil {
		return fmt.Errorf("wirespeed binary: %w", err)
	}

	where, target, start, stop, err := setUp(bin, *useLab)
	if err != nil {
		return err
	}
	defer stop()

	secs := strconv.FormatFloat(rounds.Length.Seconds(), 'f', -1, 64)
	fmt.Printf("# TCP_STREAM %s, %s, sizes %s, pinning %s; medians over the rounds\n",
		where, rounds, *sizes, map[bool]string{true: *pin, false: "none"}[*pin != ""])
	type key struct{ mode, size string }
	type figs struct {
		bps, lsd, rsd     []float64
		completed, copied int64
	}
	got := map[key]*figs{}
	var sizeList []string
	for r := 1; r <= rounds.Pairs; r++ {
		for _, i := range order.Round(r-1, len(modes)) {
			m := modes[i]
			args := append([]string{"sweep", target, "--sizes", *sizes, "-l", secs, "-i", "0", "--json"}, m.args...)
			if *pin != "" {
				args = append(args, "-T", *pin)
			}
			doc, err := sweep(start, bin, args)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			for _, p := range doc.Points {
				size := strconv.Itoa(p.MsgSize)
				if r == 1 && !slices.Contains(sizeList, size) {
					sizeList = append(sizeList, size)
				}
				k := key{m.name, size}
				if got[k] == nil {
					got[k] = &figs{}
				}
				f := got[k]
				lsd, _ := benchutil.ServiceDemand(p.Summary.LocalCPU)
				rsd, _ := benchutil.ServiceDemand(p.Summary.RemoteCPU)
				f.bps = append(f.bps, p.Summary.BitsPerSecond)
				f.lsd = append(f.lsd, lsd)
				f.rsd = append(f.rsd, rsd)
				if dp := p.Local.DataPath; dp != nil {
					f.completed += dp.ZeroCopyCompleted
					f.copied += dp.ZeroCopyCopied
				}
				fmt.Fprintf(os.Stderr, "round %d %-16s %7s %9.0f Mb/s  sd %.3f/%.3f us/KB\n", r, m.name, size, p.Summary.BitsPerSecond/1e6, lsd, rsd)
			}
		}
	}

	fmt.Printf("%7s  %-16s %12s  %-40s %14s %14s  %s\n", "size", "mode", "Mb/s", "vs copy, per round (median, IQR, min-max)", "send SD us/KB", "recv SD us/KB", "MSG_ZEROCOPY sends the kernel copied")
	for _, size := range sizeList {
		base := got[key{modes[0].name, size}]
		for _, m := range modes {
			f := got[key{m.name, size}]
			if f == nil || base == nil || len(f.bps) != len(base.bps) {
				continue
			}
			vs := make([]float64, len(f.bps))
			for i := range vs {
				vs[i] = f.bps[i] / base.bps[i]
			}
			copied := ""
			if f.completed > 0 {
				copied = fmt.Sprintf("%d of %d", f.copied, f.completed)
			}
			fmt.Printf("%7s  %-16s %12.0f  %-40s %14.3f %14.3f  %s\n", size, m.name, benchutil.Median(f.bps)/1e6, benchutil.Spread(vs), benchutil.Median(f.lsd), benchutil.Median(f.rsd), copied)
		}
	}
	return nil
}

// starter starts a command where the client runs.
type starter func(*exec.Cmd) error

func sweep(start starter, bin string, args []string) (result.Document, error) {
	var doc result.Document
	var stdout, stderr strings.Builder
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := start(cmd); err != nil {
		return doc, err
	}
	if err := cmd.Wait(); err != nil {
		return doc, fmt.Errorf("wirespeed %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	doc, err := result.Decode([]byte(stdout.String()))
	if err != nil {
		return doc, fmt.Errorf("sweep output: %w", err)
	}
	return doc, nil
}

// setUp starts the server: on loopback, or in side a of a new lab with the
// client in side b. It returns where the runs happen, the server's
// address, how to start a client and how to clean up.
func setUp(bin string, useLab bool) (string, string, starter, func(), error) {
	if !useLab {
		port, err := benchutil.FreePort()
		if err != nil {
			return "", "", nil, nil, err
		}
		srv, err := benchutil.Start(bin, "serve", "--listen", "127.0.0.1:"+port, "--log-level", "warn")
		if err != nil {
			return "", "", nil, nil, err
		}
		return "on loopback", "127.0.0.1:" + port, (*exec.Cmd).Start, srv.Stop, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := lab.Up(ctx, lab.Config{Name: "zcbench"})
	if err != nil {
		return "", "", nil, nil, err
	}
	addr := l.A.IPv4.String() + ":7575"
	srv := exec.Command(bin, "serve", "--listen", addr, "--log-level", "warn")
	if err := l.Start(lab.A, srv); err != nil {
		l.Down()
		return "", "", nil, nil, err
	}
	time.Sleep(500 * time.Millisecond)
	stop := func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
		l.Down()
	}
	where := fmt.Sprintf("across a veth pair between two namespaces (lab %s, MTU %d)", l.Name, l.MTU)
	return where, addr, func(c *exec.Cmd) error { return l.Start(lab.B, c) }, stop, nil
}
