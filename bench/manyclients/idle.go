package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/lab"
)

// holdCommand is the argument that makes this program the holder of the
// idle sessions, run by the bench in side b: it opens them, says so on
// stdout, and closes them when its standard input ends.
const holdCommand = "hold"

// perAddr is how many sessions the holder opens from one address: the
// server's default --max-conns-per-addr.
const perAddr = 8

// idleSessions holds -idle authenticated sessions against a wirespeed
// server and reports its memory with and without them.
func (b *bench) idleSessions(ctx context.Context) error {
	srvAddr := fmt.Sprintf("%s:%d", b.l.A.IPv4, wsPort)
	metrics := fmt.Sprintf("%s:%d", b.l.A.IPv4, wsPort+2000)
	argv := append([]string{b.s.ws, "serve", "--listen", srvAddr, "--psk-file", b.key, "--metrics-listen", metrics}, b.s.serverExtra...)
	srv, err := b.startServer(ctx, argv, wsPort)
	if err != nil {
		return err
	}
	defer srv.stop()
	pid := srv.cmd.Process.Pid
	time.Sleep(time.Second)
	before, err := b.serverState(pid, metrics)
	if err != nil {
		return err
	}

	self, err := os.Executable()
	if err != nil {
		return err
	}
	n := b.s.idle
	last := b.addrs[(n-1)/perAddr]
	holder := exec.Command(self, holdCommand, "-addr", srvAddr, "-n", strconv.Itoa(n), "-key", b.key,
		"-from", b.addrs[0].String(), "-to", last.String())
	stdin, err := holder.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		return err
	}
	holder.Stderr = os.Stderr
	if err := b.l.Start(lab.B, holder); err != nil {
		return err
	}
	defer func() {
		stdin.Close()
		holder.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("the holder of the sessions ended: %w", err)
	}
	fmt.Printf("# idle sessions: %s", line)
	time.Sleep(time.Second)
	with, err := b.serverState(pid, metrics)
	if err != nil {
		return err
	}
	established, err := b.ss("-Htn", "state", "established", fmt.Sprintf("( sport = :%d )", wsPort))
	if err != nil {
		return err
	}
	open := strings.Count(established, "\n")
	per := float64(with.rssKB-before.rssKB) * 1024 / float64(n)
	fmt.Printf("| server | sessions | VmRSS | Go stacks | Go heap in use | threads | goroutines | control connections established (ss) |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Printf("| idle, none | 0 | %.1f MB | %.1f MB | %.1f MB | %d | %d | - |\n", float64(before.rssKB)/1024, float64(before.stackBytes)/(1<<20), float64(before.heapBytes)/(1<<20), before.threads, before.goroutines)
	fmt.Printf("| with %d idle authenticated sessions | %d | %.1f MB | %.1f MB | %.1f MB | %d | %d | %d |\n", n, with.sessions, float64(with.rssKB)/1024, float64(with.stackBytes)/(1<<20), float64(with.heapBytes)/(1<<20), with.threads, with.goroutines, open)
	fmt.Printf("\nper session: %.1f KB of RSS (%.1f KB of stacks, %.1f KB of heap), %.2f goroutines; load %s\n", per/1024,
		float64(with.stackBytes-before.stackBytes)/1024/float64(n), float64(with.heapBytes-before.heapBytes)/1024/float64(n),
		float64(with.goroutines-before.goroutines)/float64(n), loadavg())
	fmt.Printf("\n```\nserver (side a): %s\nholder (side b): %s\n```\n", strings.Join(argv, " "), strings.Join(holder.Args, " "))
	return nil
}

// serverState is what the bench reads of a server process.
type serverState struct {
	rssKB      int64
	threads    int64
	goroutines int64
	sessions   int64
	// The Go runtime's own: goroutine stacks, and heap in use.
	stackBytes, heapBytes int64
}

func (b *bench) serverState(pid int, metrics string) (serverState, error) {
	var st serverState
	var err error
	if st.rssKB, err = status(pid, "VmRSS"); err != nil {
		return st, err
	}
	if st.threads, err = status(pid, "Threads"); err != nil {
		return st, err
	}
	var out strings.Builder
	curl := exec.Command("curl", "-sf", "http://"+metrics+"/metrics")
	curl.Stdout = &out
	if err := b.l.Start(lab.A, curl); err != nil {
		return st, fmt.Errorf("curl (Debian's curl package): %w", err)
	}
	if err := curl.Wait(); err != nil {
		return st, fmt.Errorf("curl http://%s/metrics: %w", metrics, err)
	}
	st.goroutines = metric(out.String(), "go_goroutines")
	st.sessions = metric(out.String(), "wirespeed_control_connections_active")
	st.stackBytes = metric(out.String(), "go_memstats_stack_inuse_bytes")
	st.heapBytes = metric(out.String(), "go_memstats_heap_inuse_bytes")
	return st, nil
}

// metric is the value of an unlabelled metric in Prometheus's text format.
func metric(text, name string) int64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int64(f)
		}
	}
	return -1
}

// hold opens the sessions, perAddr from each address from -from to -to,
// 64 handshakes at a time, prints one line, and waits for its standard
// input to end before saying bye on each.
func hold(args []string) error {
	fs := flag.NewFlagSet(holdCommand, flag.ContinueOnError)
	addr := fs.String("addr", "", "server")
	n := fs.Int("n", 0, "sessions")
	keyFile := fs.String("key", "", "pre-shared key file")
	fromS := fs.String("from", "", "first address")
	toS := fs.String("to", "", "last address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key, err := control.LoadKey(*keyFile)
	if err != nil {
		return err
	}
	from, err := netip.ParseAddr(*fromS)
	if err != nil {
		return err
	}
	to, err := netip.ParseAddr(*toS)
	if err != nil {
		return err
	}
	var addrs []netip.Addr
	for a := from; a.Compare(to) <= 0; a = a.Next() {
		addrs = append(addrs, a)
	}
	ctx := context.Background()
	clients := make([]*client.Client, *n)
	errs := make([]error, *n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range *n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cfg := client.Config{Addr: *addr, Tool: "manyclients", BindAddr: addrs[(i/perAddr)%len(addrs)], Security: client.Security{PSK: key}}
			clients[i], errs[i] = client.Dial(ctx, cfg)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	held := 0
	var first error
	for i, c := range clients {
		if c != nil {
			held++
		} else if first == nil {
			first = errs[i]
		}
	}
	if first != nil {
		fmt.Printf("held %d of %d sessions in %v; the first failure: %v\n", held, *n, took.Round(time.Millisecond), first)
	} else {
		fmt.Printf("held %d authenticated sessions, opened in %v\n", held, took.Round(time.Millisecond))
	}
	io.Copy(io.Discard, os.Stdin)
	for _, c := range clients {
		if c != nil {
			wg.Add(1)
			go func() { defer wg.Done(); c.Close() }()
		}
	}
	wg.Wait()
	return nil
}
