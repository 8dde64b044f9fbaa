// Command manyclients measures one server serving many clients at once,
// across a veth pair between two namespaces of a lab (needs root):
//
//   - the rate: -clients clients (64), each from an address of its own,
//     each a TCP_STREAM paced to -rate (20M) for -l, all at once against
//     `wirespeed serve --max-tests N` and, in the same rounds (ABBA), against
//     iperf2's `iperf -s` with `iperf -c -b` clients. Every client's rate
//     is taken twice: by the tool (wirespeed's receiver; iperf2's own
//     server report) and by the kernel, as the growth of the connection's
//     bytes_received (TCP_INFO read by `ss -ti` in the server's namespace)
//     over a window when every client is sending. The worst client's
//     distance from -rate is the figure; the target is 2%.
//   - the server's CPU per byte: the server process's own CPU time
//     (utime+stime of /proc/PID/stat, all its threads) from just before the
//     first client starts to after the last one ended, over the bytes its
//     device (wst-a) received meanwhile (the kernel's link counters), in
//     microseconds per KB, for both servers; the ratio within each round.
//   - idle sessions (-idle 1000): a wirespeed server with --psk-file holds
//     that many authenticated control sessions that run no test; the
//     server's resident memory (VmRSS) before and with them, its threads,
//     and its goroutines from its own /metrics.
//
// Usage:
//
//	go build -o /tmp/wirespeed ./cmd/wirespeed
//	sudo go run ./bench/manyclients -wirespeed /tmp/wirespeed -l 10s -pairs 5 -cc cubic,bbr
//	sudo go run ./bench/manyclients -wirespeed /tmp/wirespeed -rate-rounds=false -idle 1000
//
// Same settings for both tools: 128 KiB writes and reads (wirespeed's -m
// and -M defaults; iperf2's -l on both ends), the system's socket buffers,
// the congestion control of -cc on the clients' sockets (wirespeed --cc,
// which sets the server's too; iperf2 -Z), no interval reports (wirespeed
// -i 0; iperf2 without -i). wirespeed's CPU figures stay on (its default):
// what a user's server pays. The lab is made at the start and removed at
// the end, on every path out (an interrupt included).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"

	"wirespeed/bench/internal/benchutil"
	"wirespeed/internal/lab"
	"wirespeed/internal/units"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == holdCommand {
		if err := hold(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "manyclients hold:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "manyclients:", err)
		os.Exit(1)
	}
}

// settings are the bench's flags.
type settings struct {
	ws, iperf   string
	clients     int
	rate        float64
	rateText    string
	ccs         []string
	rounds      *benchutil.Rounds
	order       *benchutil.Order
	name        string
	idle        int
	rateRounds  bool
	tolerance   float64
	serverExtra []string
	only        []string
	perf        string
	keep        string
}

const (
	wsPort    = 7575
	iperfPort = 5001
	// firstClientHost is the host number of the first client address in
	// the lab's subnet (the lab's own are 1 and 2).
	firstClientHost = 10
)

func run() error {
	var s settings
	flag.StringVar(&s.ws, "wirespeed", "wirespeed", "wirespeed binary")
	only := flag.String("tools", "wirespeed,iperf2", "the servers to run, in this order within a round")
	flag.StringVar(&s.iperf, "iperf", "iperf", "iperf2 binary (Debian's iperf package); none to skip it")
	flag.IntVar(&s.clients, "clients", 64, "clients at once, each from an address of its own")
	flag.StringVar(&s.rateText, "rate", "20M", "each client's rate (-b), bits/s")
	cc := flag.String("cc", "cubic,bbr", "congestion controls, one row each")
	flag.StringVar(&s.name, "name", "manycl", "lab name (namespaces wst-NAME-a, wst-NAME-b)")
	flag.IntVar(&s.idle, "idle", 0, "idle authenticated control sessions to hold against a wirespeed server (0: skip)")
	flag.BoolVar(&s.rateRounds, "rate-rounds", true, "run the rounds of many clients (-rate-rounds=false: idle sessions only)")
	flag.Float64Var(&s.tolerance, "tolerance", 0.02, "the largest distance of a client's rate from -rate that meets the target")
	extra := flag.String("serve-flags", "", "more flags for wirespeed serve, space-separated (e.g. for a before/after comparison)")
	flag.StringVar(&s.keep, "keep", "", "keep every client's output and the server's log in `DIR`")
	flag.StringVar(&s.perf, "perf", "", "record every CPU with perf record -a -g into `FILE`.TOOL.N during each round (linux-perf; perf report --pid PID, printed, for the server's)")
	s.rounds = benchutil.RegisterRounds(flag.CommandLine)
	flag.Parse()
	var err error
	if s.order, err = s.rounds.Check(); err != nil {
		return err
	}
	if s.rate, err = units.ParseRate(s.rateText); err != nil {
		return fmt.Errorf("-rate %q: %w", s.rateText, err)
	}
	if s.clients < 1 || s.clients > 200 {
		return fmt.Errorf("-clients %d: use 1 to 200 (one address each in a /24)", s.clients)
	}
	s.ccs = benchutil.List(*cc)
	s.only = benchutil.List(*only)
	s.serverExtra = strings.Fields(*extra)
	if s.ws, err = filepath.Abs(s.ws); err != nil {
		return err
	}
	if _, err := exec.LookPath(s.ws); err != nil {
		return fmt.Errorf("wirespeed binary: %w", err)
	}
	if s.iperf != "none" {
		if s.iperf, err = benchutil.Find(s.iperf); err != nil {
			fmt.Fprintf(os.Stderr, "manyclients: %v; install Debian's iperf package, or -iperf none\n", err)
			s.iperf = ""
		}
	} else {
		s.iperf = ""
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root (a lab of two network namespaces)")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Output piped to a reader that went away (| head) must not kill the
	// bench before it removes its lab.
	signal.Ignore(syscall.SIGPIPE)
	b, err := newBench(ctx, s)
	if err != nil {
		return err
	}
	defer b.close()

	fmt.Printf("# manyclients: %s, kernel %s, %d CPUs, %s; %s\n", time.Now().UTC().Format(time.RFC3339), kernel(), cpus(), versions(s), s.rounds)
	if s.rateRounds {
		if err := b.rateRows(ctx); err != nil {
			return err
		}
	}
	if s.idle > 0 {
		if err := b.idleSessions(ctx); err != nil {
			return err
		}
	}
	return nil
}

// bench is the lab and what runs in it.
type bench struct {
	s        settings
	l        *lab.Lab
	addrs    []netip.Addr // the clients' addresses, in side b
	key      string       // a pre-shared key file for the idle sessions
	perfRuns int
	keepRuns int
	dir      string
}

// addrsFor is how many client addresses the bench needs: one per rate
// client, and enough for the idle sessions at the server's default of 8
// per address.
func (s settings) addrsFor() int { return max(s.clients, (s.idle+7)/8) }

func newBench(ctx context.Context, s settings) (*bench, error) {
	if s.addrsFor() > 240 {
		return nil, fmt.Errorf("-idle %d needs %d addresses at 8 sessions each; at most 1920 sessions", s.idle, s.addrsFor())
	}
	upCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	l, err := lab.Up(upCtx, lab.Config{Name: s.name})
	if err != nil {
		return nil, err
	}
	b := &bench{s: s, l: l}
	if b.dir, err = os.MkdirTemp("", "manyclients-"); err != nil {
		b.close()
		return nil, err
	}
	b.key = filepath.Join(b.dir, "key")
	if err := os.WriteFile(b.key, []byte("manyclients-bench-key-0123456789abcdef\n"), 0o600); err != nil {
		b.close()
		return nil, err
	}
	prefix := lab.DefaultIPv4
	a := prefix.Addr()
	for range firstClientHost {
		a = a.Next()
	}
	for range s.addrsFor() {
		b.addrs = append(b.addrs, a)
		a = a.Next()
	}
	err = l.Do(lab.B, func() error {
		link, err := netlink.LinkByName(l.B.Dev)
		if err != nil {
			return err
		}
		for _, a := range b.addrs {
			pfx := netip.PrefixFrom(a, prefix.Bits())
			addr, err := netlink.ParseAddr(pfx.String())
			if err != nil {
				return err
			}
			// No duplicate address detection on IPv4; nodad keeps the
			// flag set sane should the prefix ever be IPv6.
			if err := netlink.AddrAdd(link, addr); err != nil {
				return fmt.Errorf("add %s to %s: %w", pfx, l.B.Dev, err)
			}
		}
		return nil
	})
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// close removes the lab and the temporary files.
func (b *bench) close() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
	if err := b.l.Down(); err != nil {
		fmt.Fprintf(os.Stderr, "manyclients: remove lab %s: %v (wirespeed lab down --name %s)\n", b.l.Name, err, b.l.Name)
	}
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

func cpus() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "\nprocessor") + map[bool]int{true: 1}[strings.HasPrefix(string(b), "processor")]
}

func versions(s settings) string {
	v := []string{}
	if out, err := exec.Command(s.ws, "version").Output(); err == nil {
		v = append(v, strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]))
	}
	if s.iperf != "" {
		out, _ := exec.Command(s.iperf, "-v").CombinedOutput()
		v = append(v, strings.TrimSpace(string(out)))
	}
	return strings.Join(v, ", ")
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// proc is a server process in side a.
type proc struct {
	cmd  *exec.Cmd
	out  *strings.Builder
	mu   sync.Mutex
	argv []string
}

// startServer starts argv in side a and waits until it listens on port.
func (b *bench) startServer(ctx context.Context, argv []string, port int) (*proc, error) {
	p := &proc{argv: argv, out: &strings.Builder{}}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	w := &lockedWriter{p: p}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := b.l.Start(lab.A, p.cmd); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := b.listening(port)
		if err == nil && n > 0 {
			return p, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			return nil, fmt.Errorf("%s: not listening on %d after 10 s: %v\n%s", benchutil.Quote(argv), port, err, p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type lockedWriter struct{ p *proc }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.p.out.Len() < 1<<20 {
		w.p.out.Write(b)
	}
	return len(b), nil
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// stop interrupts the server by its process id and waits for it.
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// cpuTime is the process's user and system time, all its threads, from
// /proc/PID/stat (clock ticks of 10 ms).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command may hold spaces and parentheses: fields count from the
	// last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	// After the command: state(3) ... utime(14) stime(15), so 11 and 12 here.
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// status reads a field of /proc/PID/status ("VmRSS", "Threads") as a
// number (kB for memory).
func status(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// rxBytes is what the server's device has received, from the kernel's
// link counters.
func (b *bench) rxBytes() (uint64, error) {
	var n uint64
	err := b.l.Do(lab.A, func() error {
		link, err := netlink.LinkByName(b.l.A.Dev)
		if err != nil {
			return err
		}
		if st := link.Attrs().Statistics; st != nil {
			n = st.RxBytes
			return nil
		}
		return errors.New("no link statistics")
	})
	return n, err
}

// listening counts the sockets listening on port in side a.
func (b *bench) listening(port int) (int, error) {
	out, err := b.ss("-Hltn", fmt.Sprintf("( sport = :%d )", port))
	if err != nil {
		return 0, err
	}
	return strings.Count(out, "LISTEN"), nil
}

// ss runs ss in side a.
func (b *bench) ss(args ...string) (string, error) {
	var out strings.Builder
	cmd := exec.Command("ss", args...)
	cmd.Stdout = &out
	if err := b.l.Start(lab.A, cmd); err != nil {
		return "", err
	}
	err := cmd.Wait()
	return out.String(), err
}

// received is the bytes each client address has sent to port, summed
// over its established connections, as TCP_INFO's bytes_received in side
// a says, and when it was read.
func (b *bench) received(port int) (map[netip.Addr]int64, time.Time, error) {
	t0 := time.Now()
	out, err := b.ss("-Htin", "state", "established", fmt.Sprintf("( sport = :%d )", port))
	t1 := time.Now()
	if err != nil {
		return nil, t0, err
	}
	return parseSS(out), t0.Add(t1.Sub(t0) / 2), nil
}

// parseSS reads `ss -Htin` output: the bytes_received of each
// connection, summed by peer address.
func parseSS(out string) map[netip.Addr]int64 {
	got := map[netip.Addr]int64{}
	var peer netip.Addr
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			f := strings.Fields(line)
			peer = netip.Addr{}
			if len(f) > 0 {
				if ap, err := netip.ParseAddrPort(f[len(f)-1]); err == nil {
					peer = ap.Addr().Unmap()
				}
			}
			continue
		}
		if !peer.IsValid() {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "bytes_received:"); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					got[peer] += n
				}
			}
		}
	}
	return got
}

// tool is one server and its clients.
type tool struct {
	name   string
	port   int
	server []string
	client func(from netip.Addr, cc string) []string
	// rates reads each client's rate as the tool measured it, from the
	// clients' outputs (by index) and the server's output.
	rates func(outs []string, server string) (map[netip.Addr]float64, error)
}

func (b *bench) tools() []tool {
	s := b.s
	srvAddr := b.l.A.IPv4.String()
	secs := strconv.FormatFloat(s.rounds.Length.Seconds(), 'f', -1, 64)
	ws := tool{
		name: "wirespeed",
		port: wsPort,
		server: append([]string{s.ws, "serve", "--listen", fmt.Sprintf("%s:%d", srvAddr, wsPort),
			"--max-tests", strconv.Itoa(s.clients)}, s.serverExtra...),
		client: func(from netip.Addr, cc string) []string {
			return []string{s.ws, "run", fmt.Sprintf("%s:%d", srvAddr, wsPort), "-B", from.String(),
				"-t", "TCP_STREAM", "-b", s.rateText, "-l", secs, "-i", "0", "--cc", cc, "--json"}
		},
		rates: func(outs []string, _ string) (map[netip.Addr]float64, error) {
			got := map[netip.Addr]float64{}
			for i, out := range outs {
				doc, err := benchutil.ParseWirespeed([]byte(out))
				if err != nil {
					return nil, fmt.Errorf("client %d: %w", i+1, err)
				}
				if len(doc.Directions) != 1 {
					return nil, fmt.Errorf("client %d: %d directions", i+1, len(doc.Directions))
				}
				got[b.addrs[i]] = doc.Directions[0].Summary.BitsPerSecond
			}
			return got, nil
		},
	}
	all := []tool{ws}
	if s.iperf != "" {
		all = append(all, tool{
			name:   "iperf2",
			port:   iperfPort,
			server: []string{s.iperf, "-s", "-B", srvAddr, "-p", strconv.Itoa(iperfPort), "-l", "128K", "-y", "C"},
			client: func(from netip.Addr, cc string) []string {
				return []string{s.iperf, "-c", srvAddr, "-p", strconv.Itoa(iperfPort), "-B", from.String(),
					"-b", strconv.FormatFloat(s.rate, 'f', 0, 64), "-t", secs, "-l", "128K", "-Z", cc}
			},
			rates: func(_ []string, server string) (map[netip.Addr]float64, error) {
				return parseIperf2CSV(server), nil
			},
		})
	}
	var tools []tool
	for _, name := range s.only {
		for _, t := range all {
			if t.name == name {
				tools = append(tools, t)
			}
		}
	}
	return tools
}

// parseIperf2CSV reads iperf2's server reports (-y C): one line per
// connection, "time,peer,pport,local,lport,id,interval,bytes,bps".
func parseIperf2CSV(out string) map[netip.Addr]float64 {
	got := map[netip.Addr]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 9 {
			continue
		}
		// The server writes the client's address and port first, then
		// its own.
		a, err := netip.ParseAddr(f[1])
		bps, err2 := strconv.ParseFloat(f[8], 64)
		if err != nil || err2 != nil {
			continue
		}
		got[a.Unmap()] = bps
	}
	return got
}

// roundFigures is what one round of one tool gave.
type roundFigures struct {
	cpu          time.Duration
	rx           uint64
	usPerKB      float64
	kernel       map[netip.Addr]float64 // each client's rate from bytes_received
	window       time.Duration          // the window of kernel
	own          map[netip.Addr]float64 // each client's rate as the tool says
	load0, load1 string
}

// worst is the largest distance of a rate from target, as a fraction,
// and the lowest and highest rate; missing clients count as 0.
func (b *bench) worst(rates map[netip.Addr]float64) (dist, lo, hi float64) {
	for i, a := range b.addrs[:b.s.clients] {
		r := rates[a]
		if math.IsNaN(r) {
			r = 0 // no span to measure it over: counted as missing
		}
		dist = max(dist, math.Abs(r/b.s.rate-1))
		if i == 0 || r < lo {
			lo = r
		}
		hi = max(hi, r)
	}
	return dist, lo, hi
}

// outside lists the clients outside the tolerance with their rates.
func (b *bench) outside(rates map[netip.Addr]float64) string {
	var out []string
	for i, a := range b.addrs[:b.s.clients] {
		if r := rates[a]; r < b.s.rate*(1-b.s.tolerance) || r > b.s.rate*(1+b.s.tolerance) {
			out = append(out, fmt.Sprintf("%d %.3f", i+1, r/1e6))
		}
	}
	return strings.Join(out, ", ")
}

// within counts the clients within the tolerance.
func (b *bench) within(rates map[netip.Addr]float64) int {
	n := 0
	for _, a := range b.addrs[:b.s.clients] {
		if r, ok := rates[a]; ok && r >= b.s.rate*(1-b.s.tolerance) && r <= b.s.rate*(1+b.s.tolerance) {
			n++
		}
	}
	return n
}

// round runs every client of t at once against a fresh server.
func (b *bench) round(ctx context.Context, t tool, cc string) (roundFigures, error) {
	var f roundFigures
	srv, err := b.startServer(ctx, t.server, t.port)
	if err != nil {
		return f, err
	}
	defer srv.stop()
	pid := srv.cmd.Process.Pid
	f.load0 = loadavg()
	cpu0, err := cpuTime(pid)
	if err != nil {
		return f, err
	}
	rx0, err := b.rxBytes()
	if err != nil {
		return f, err
	}
	if b.s.perf != "" {
		b.perfRuns++
		rec := exec.Command("perf", "record", "-q", "-F", "499", "-g", "-a", "-o", fmt.Sprintf("%s.%s.%d", b.s.perf, t.name, b.perfRuns))
		if err := rec.Start(); err != nil {
			return f, fmt.Errorf("perf record: %w", err)
		}
		defer func() {
			rec.Process.Signal(os.Interrupt)
			rec.Wait()
		}()
		fmt.Fprintf(os.Stderr, "manyclients: perf record into %s; the server is pid %d\n", rec.Args[len(rec.Args)-1], pid)
	}
	n := b.s.clients
	cmds := make([]*exec.Cmd, n)
	outs := make([]strings.Builder, n)
	errs := make([]strings.Builder, n)
	for i := range n {
		argv := t.client(b.addrs[i], cc)
		cmds[i] = exec.Command(argv[0], argv[1:]...)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &errs[i]
		if err := b.l.Start(lab.B, cmds[i]); err != nil {
			for _, c := range cmds[:i] {
				c.Process.Kill()
				c.Wait()
			}
			return f, err
		}
	}
	exited := make(chan int, n)
	waitErrs := make([]error, n)
	for i, c := range cmds {
		go func() { waitErrs[i] = c.Wait(); exited <- i }()
	}
	waitAll := func() {
		for range n {
			<-exited
		}
	}

	// The kernel's figure: ss reads every connection's bytes_received in
	// side a every half second until the clients are done; each client's
	// rate is over its own span of those readings, from a second after
	// its data began to a second before its connection went (or its
	// bytes stopped growing), so that neither its start nor its end, nor
	// the other clients' spread over time, is in it.
	var samples []ssSample
	for len(exited) < n {
		got, at, err := b.received(t.port)
		if err != nil {
			waitAll()
			return f, err
		}
		samples = append(samples, ssSample{at, got})
		time.Sleep(500 * time.Millisecond)
	}
	f.kernel, f.window = kernelRates(samples, b.addrs[:n])
	waitAll()
	cpu1, err := cpuTime(pid)
	if err != nil {
		return f, err
	}
	rx1, err := b.rxBytes()
	if err != nil {
		return f, err
	}
	f.load1 = loadavg()
	for i, err := range waitErrs {
		if err != nil {
			return f, fmt.Errorf("%s client %d: %v: %s", t.name, i+1, err, errs[i].String())
		}
	}
	f.cpu, f.rx = cpu1-cpu0, rx1-rx0
	if b.s.keep != "" {
		b.keepRuns++
		dir := filepath.Join(b.s.keep, fmt.Sprintf("%s.%s.%d", t.name, cc, b.keepRuns))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return f, err
		}
		for i := range outs {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("client%d.out", i+1)), []byte(outs[i].String()), 0o644)
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("client%d.err", i+1)), []byte(errs[i].String()), 0o644)
		}
		defer func() { os.WriteFile(filepath.Join(dir, "server.log"), []byte(srv.output()), 0o644) }()
	}
	f.usPerKB = float64(f.cpu.Microseconds()) / (float64(f.rx) / 1024)
	srv.stop()
	clientOuts := make([]string, n)
	for i := range outs {
		clientOuts[i] = outs[i].String()
	}
	if f.own, err = t.rates(clientOuts, srv.output()); err != nil {
		return f, err
	}
	return f, nil
}

// ssSample is one reading of every connection's bytes_received.
type ssSample struct {
	at  time.Time
	got map[netip.Addr]int64
}

// kernelRates is each client's rate over its own span of the samples:
// from the first a second after its bytes began to grow to the last a
// second before they last grew (its connection's end), NaN when that
// span is under a second; and the shortest span.
func kernelRates(samples []ssSample, addrs []netip.Addr) (map[netip.Addr]float64, time.Duration) {
	rates := map[netip.Addr]float64{}
	var shortest time.Duration
	for _, a := range addrs {
		first, last := -1, -1
		for i := 1; i < len(samples); i++ {
			if samples[i].got[a] > samples[i-1].got[a] {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first < 0 {
			rates[a] = math.NaN()
			continue
		}
		// A second in from each end: the first reading at least a second
		// after its bytes began to grow, the last at least a second
		// before they last did (readings come less often than asked on a
		// busy host: ss itself waits for a CPU).
		i, j := first, last
		for i < last && samples[i].at.Sub(samples[first].at) < time.Second {
			i++
		}
		for j > first && samples[last].at.Sub(samples[j].at) < time.Second {
			j--
		}
		if j <= i || samples[j].at.Sub(samples[i].at) < time.Second {
			rates[a] = math.NaN()
			continue
		}
		span := samples[j].at.Sub(samples[i].at)
		rates[a] = float64(samples[j].got[a]-samples[i].got[a]) * 8 / span.Seconds()
		if shortest == 0 || span < shortest {
			shortest = span
		}
	}
	return rates, shortest
}

// rateRows runs the rounds of every congestion control and prints the
// table.
func (b *bench) rateRows(ctx context.Context) error {
	tools := b.tools()
	fmt.Printf("# %d clients at once, each TCP_STREAM -b %s for %v from its own address in side b, against one server in side a (lab %s, veth, MTU %d)\n",
		b.s.clients, b.s.rateText, b.s.rounds.Length, b.l.Name, b.l.MTU)
	type row struct {
		cc   string
		runs map[string][]roundFigures
	}
	var rows []row
	for _, cc := range b.s.ccs {
		r := row{cc: cc, runs: map[string][]roundFigures{}}
		for k := range b.s.rounds.Pairs {
			for _, i := range b.s.order.Round(k, len(tools)) {
				t := tools[i]
				if ctx.Err() != nil {
					return ctx.Err()
				}
				f, err := b.round(ctx, t, cc)
				if err != nil {
					return fmt.Errorf("%s round %d: %w", cc, k+1, err)
				}
				r.runs[t.name] = append(r.runs[t.name], f)
				kd, klo, khi := b.worst(f.kernel)
				od, olo, ohi := b.worst(f.own)
				fmt.Printf("%-6s %2d %-9s server %6.3f us/KB (%.2f CPU-s, %.1f MB)  kernel: worst %5.2f%% [%.2f-%.2f Mbit/s, each over %.1f s or more, %d within]  own: worst %5.2f%% [%.2f-%.2f, %d within]  load %s -> %s\n",
					cc, k+1, t.name, f.usPerKB, f.cpu.Seconds(), float64(f.rx)/1e6,
					100*kd, klo/1e6, khi/1e6, f.window.Seconds(), b.within(f.kernel),
					100*od, olo/1e6, ohi/1e6, b.within(f.own), f.load0, f.load1)
				if off := b.outside(f.kernel); off != "" {
					fmt.Printf("       kernel's figure outside %g%%: %s\n", 100*b.s.tolerance, off)
				}
				if off := b.outside(f.own); off != "" {
					fmt.Printf("       %s's own figure outside %g%%: %s\n", t.name, 100*b.s.tolerance, off)
				}
			}
		}
		rows = append(rows, r)
	}

	fmt.Println()
	fmt.Printf("| row | figure | %s |", strings.Join(names(tools), " | "))
	if len(tools) > 1 {
		fmt.Printf(" wirespeed / iperf2 (median, IQR, min-max) |")
	}
	fmt.Println()
	fmt.Println("|" + strings.Repeat("---|", 2+len(tools)+min(1, len(tools)-1)))
	for _, r := range rows {
		name := fmt.Sprintf("%d x TCP_STREAM -b %s %s", b.s.clients, b.s.rateText, r.cc)
		cell := func(get func(roundFigures) float64, format string) []string {
			var c []string
			for _, t := range tools {
				var v []float64
				for _, f := range r.runs[t.name] {
					v = append(v, get(f))
				}
				c = append(c, fmt.Sprintf(format, benchutil.Median(v)))
			}
			return c
		}
		sd := cell(func(f roundFigures) float64 { return f.usPerKB }, "%.3f")
		ratio := ""
		if len(tools) > 1 {
			var v []float64
			for i := range r.runs[tools[0].name] {
				v = append(v, r.runs[tools[0].name][i].usPerKB/r.runs[tools[1].name][i].usPerKB)
			}
			ratio = " " + benchutil.Spread(v) + " |"
		}
		fmt.Printf("| %s | server CPU us/KB received (lower is better) | %s |%s\n", name, strings.Join(sd, " | "), ratio)
		worstOf := func(get func(roundFigures) map[netip.Addr]float64) []string {
			var c []string
			for _, t := range tools {
				var v []float64
				within, all := 0, 0
				for _, f := range r.runs[t.name] {
					d, _, _ := b.worst(get(f))
					v = append(v, 100*d)
					within += b.within(get(f))
					all += b.s.clients
				}
				c = append(c, fmt.Sprintf("%.2f%% (max %.2f%%; %d of %d within %g%%)", benchutil.Median(v), benchutil.Quantile(v, 1), within, all, 100*b.s.tolerance))
			}
			return c
		}
		fmt.Printf("| %s | worst client off -b, kernel's bytes_received (median of rounds) | %s |\n", name, strings.Join(worstOf(func(f roundFigures) map[netip.Addr]float64 { return f.kernel }), " | "))
		fmt.Printf("| %s | worst client off -b, the tool's own receiver figure | %s |\n", name, strings.Join(worstOf(func(f roundFigures) map[netip.Addr]float64 { return f.own }), " | "))
	}
	fmt.Println()
	fmt.Println("Commands (client i from 10.77.0.(9+i)):")
	fmt.Println()
	fmt.Println("```")
	for _, t := range tools {
		fmt.Printf("%s server (side a): %s\n", t.name, benchutil.Quote(t.server))
		fmt.Printf("%s client (side b): %s\n", t.name, benchutil.Quote(t.client(b.addrs[0], b.s.ccs[0])))
	}
	fmt.Println("```")
	return nil
}

func names(tools []tool) []string {
	var n []string
	for _, t := range tools {
		n = append(n, t.name)
	}
	return n
}
