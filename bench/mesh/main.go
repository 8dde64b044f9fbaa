// Command mesh measures `wirespeed mesh` at scale, in a mesh lab of
// -hosts hosts on one bridge (24 by default: 552 ordered pairs), a server
// in each (`wirespeed lab up --hosts N`), the runner in h1 (needs root):
//
//   - a pair's setup overhead: -serial relayed pairs (none from h1, so
//     each goes through its source's server, the usual case in a mesh)
//     run one at a time, `mesh --pairs ... --concurrency 1 -l L`; the
//     overhead per pair is the runner's wall time less the pairs' length,
//     over the pairs: the control dial, hello and key, the relay, the
//     source's dial to the destination, the idle baseline, the data
//     connections, the environment records, the drain, the results and
//     the byes. -pairs rounds of it, median and spread.
//   - the round: every ordered pair with --concurrency C (hosts/2 by
//     default, the most that can be disjoint), against its bound, pairs x
//     length / concurrency: the ratio of the wall time to the bound, and
//     the overhead per wave (rounds of the schedule: 2(hosts-1) of C
//     pairs).
//
// Usage:
//
//	go build -o /tmp/wirespeed ./cmd/wirespeed
//	sudo go run ./bench/mesh -wirespeed /tmp/wirespeed -hosts 24 -l 2s -pairs 5
//
// The lab is removed at the end, on every path out (an interrupt and a
// broken pipe included). A -rate paces every pair (-b), so that on a
// machine of few CPUs the pairs at once do not starve each other's setup;
// none by default.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wirespeed/bench/internal/benchutil"
	"wirespeed/internal/lab"
	"wirespeed/internal/result"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mesh:", err)
		os.Exit(1)
	}
}

type settings struct {
	ws          string
	hosts       int
	concurrency int
	serial      int
	rate        string
	name        string
	full        bool
	rounds      *benchutil.Rounds
	extra       []string
}

func run() error {
	var s settings
	flag.StringVar(&s.ws, "wirespeed", "wirespeed", "wirespeed binary")
	flag.IntVar(&s.hosts, "hosts", 24, "hosts of the mesh lab")
	flag.IntVar(&s.concurrency, "concurrency", 0, "pairs at once in the full round (0: hosts/2)")
	flag.IntVar(&s.serial, "serial", 12, "relayed pairs run one at a time for the setup overhead (0: skip)")
	flag.StringVar(&s.rate, "rate", "", "-b for every pair (empty: as fast as each can)")
	flag.StringVar(&s.name, "name", "meshbench", "lab name")
	flag.BoolVar(&s.full, "full", true, "run the full round of every ordered pair (-full=false: the setup overhead only)")
	extra := flag.String("mesh-flags", "", "more flags for wirespeed mesh, space-separated")
	s.rounds = benchutil.RegisterRounds(flag.CommandLine)
	flag.Parse()
	if _, err := s.rounds.Check(); err != nil {
		return err
	}
	s.extra = strings.Fields(*extra)
	if s.concurrency == 0 {
		s.concurrency = s.hosts / 2
	}
	if s.hosts < 3 || s.hosts > lab.MaxMeshHosts {
		return fmt.Errorf("-hosts %d: use 3 to %d", s.hosts, lab.MaxMeshHosts)
	}
	if s.serial > (s.hosts-1)*(s.hosts-2) {
		return fmt.Errorf("-serial %d: %d hosts have %d relayed pairs", s.serial, s.hosts, (s.hosts-1)*(s.hosts-2))
	}
	var err error
	if s.ws, err = filepath.Abs(s.ws); err != nil {
		return err
	}
	if _, err := exec.LookPath(s.ws); err != nil {
		return fmt.Errorf("wirespeed binary: %w", err)
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root (a mesh lab of network namespaces)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	signal.Ignore(syscall.SIGPIPE) // | head must not keep the lab from being removed

	up := exec.CommandContext(ctx, s.ws, "lab", "up", "--name", s.name, "--hosts", strconv.Itoa(s.hosts))
	if out, err := up.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", benchutil.Quote(up.Args), err, out)
	}
	defer func() {
		down := exec.Command(s.ws, "lab", "down", "--name", s.name)
		if out, err := down.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "mesh: %s: %v\n%s", benchutil.Quote(down.Args), err, out)
		}
	}()
	m, err := lab.LoadMesh(s.name)
	if err != nil {
		return err
	}
	srv, err := lab.LoadMeshServer(s.name, "h1")
	if err != nil || srv == nil {
		return fmt.Errorf("the lab's server in h1: %v", err)
	}
	b := &bench{s: s, m: m, key: srv.Key}
	for _, h := range m.Hosts {
		b.peers = append(b.peers, h.IPv4.String())
	}
	fmt.Printf("# mesh: %s, kernel %s, %d CPUs, %s; %d hosts (lab %s, one bridge), runner in h1, -l %v, -rate %q, %d rounds\n",
		time.Now().UTC().Format(time.RFC3339), kernel(), cpus(), version(s.ws), s.hosts, s.name, s.rounds.Length, s.rate, s.rounds.Pairs)
	if s.serial > 0 {
		if err := b.setup(ctx); err != nil {
			return err
		}
	}
	if s.full {
		if err := b.full(ctx); err != nil {
			return err
		}
	}
	return nil
}

type bench struct {
	s     settings
	m     *lab.Mesh
	key   string
	peers []string
}

// mesh runs wirespeed mesh in h1 with args after the common ones and
// returns its document and wall time.
func (b *bench) mesh(ctx context.Context, args ...string) (result.MeshDocument, time.Duration, []string, error) {
	var doc result.MeshDocument
	secs := strconv.FormatFloat(b.s.rounds.Length.Seconds(), 'f', -1, 64)
	argv := []string{b.s.ws, "mesh", "--peers", strings.Join(b.peers, ","), "--psk-file", b.key, "-l", secs, "-i", "0", "--json"}
	if b.s.rate != "" {
		argv = append(argv, "-b", b.s.rate)
	}
	argv = append(append(argv, args...), b.s.extra...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := b.m.Start(0, cmd); err != nil {
		return doc, 0, argv, err
	}
	err := cmd.Wait()
	wall := time.Since(start)
	if err != nil {
		return doc, wall, argv, fmt.Errorf("%s: %w\n%s", benchutil.Quote(argv), err, lastLines(stderr.String(), 5))
	}
	if err := benchutil.DecodeJSON(stdout.Bytes(), &doc); err != nil {
		return doc, wall, argv, err
	}
	for _, p := range doc.Pairs {
		if p.Result == nil {
			return doc, wall, argv, fmt.Errorf("pair %s -> %s not measured: %s", p.Source, p.Destination, p.Error)
		}
	}
	return doc, wall, argv, nil
}

// setup runs -serial relayed pairs one at a time, -pairs times.
func (b *bench) setup(ctx context.Context) error {
	var pairs []string
	for s := 1; s < len(b.peers) && len(pairs) < b.s.serial; s++ {
		d := 1 + (s % (len(b.peers) - 1)) // the next host, never h1
		pairs = append(pairs, b.peers[s]+":"+b.peers[d])
	}
	n := len(pairs)
	var per []float64
	var argv []string
	for r := 1; r <= b.s.rounds.Pairs; r++ {
		load0 := loadavg()
		_, wall, a, err := b.mesh(ctx, "--pairs", strings.Join(pairs, ","), "--concurrency", "1")
		if err != nil {
			return err
		}
		argv = a
		over := (wall - time.Duration(n)*b.s.rounds.Length) / time.Duration(n)
		per = append(per, float64(over.Microseconds())/1000)
		fmt.Printf("setup %d: %d relayed pairs one at a time in %.3f s: %.1f ms per pair beyond -l  (load %s -> %s)\n", r, n, wall.Seconds(), float64(over.Microseconds())/1000, load0, loadavg())
	}
	fmt.Printf("\n| figure | median (IQR, min-max) | target |\n|---|---|---|\n")
	fmt.Printf("| setup overhead per relayed pair, ms | %s | under 150 |\n\n", benchutil.Spread(per))
	fmt.Printf("```\n%s\n```\n\n", benchutil.Quote(argv))
	return nil
}

// full runs every ordered pair at the concurrency, -pairs times.
func (b *bench) full(ctx context.Context) error {
	n := len(b.peers)
	pairs := n * (n - 1)
	bound := time.Duration(pairs) * b.s.rounds.Length / time.Duration(b.s.concurrency)
	waves := 2 * (n - 1)
	if b.s.concurrency < n/2 {
		waves = (pairs + b.s.concurrency - 1) / b.s.concurrency
	}
	var ratios, perWave []float64
	var argv []string
	for r := 1; r <= b.s.rounds.Pairs; r++ {
		load0 := loadavg()
		doc, wall, a, err := b.mesh(ctx, "--concurrency", strconv.Itoa(b.s.concurrency))
		if err != nil {
			return err
		}
		argv = a
		if len(doc.Pairs) != pairs {
			return fmt.Errorf("%d pairs measured, want %d", len(doc.Pairs), pairs)
		}
		ratio := wall.Seconds() / bound.Seconds()
		over := (wall - time.Duration(waves)*b.s.rounds.Length) / time.Duration(waves)
		ratios = append(ratios, ratio)
		perWave = append(perWave, float64(over.Microseconds())/1000)
		fmt.Printf("round %d: %d pairs, --concurrency %d, in %.1f s; bound %.1f s (pairs x -l / concurrency): %.3f; %.0f ms per wave of %d beyond -l  (load %s -> %s)\n",
			r, pairs, b.s.concurrency, wall.Seconds(), bound.Seconds(), ratio, float64(over.Microseconds())/1000, waves, load0, loadavg())
	}
	fmt.Printf("\n| figure | median (IQR, min-max) | target |\n|---|---|---|\n")
	fmt.Printf("| round's wall time / (pairs x length / concurrency) | %s | at most 1.15 |\n", benchutil.Spread(ratios))
	fmt.Printf("| overhead per wave beyond -l, ms | %s | |\n\n", benchutil.Spread(perWave))
	fmt.Printf("```\n%s\n```\n", benchutil.Quote(argv))
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

func cpus() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

func version(ws string) string {
	out, _ := exec.Command(ws, "version").Output()
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
