// Package benchutil holds what the side-by-side benchmarks share: finding
// the other tools, starting servers on loopback and stopping them by
// process, running a command for its output, the order in which the tools
// take turns, and the statistics and table of the results.
package benchutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// Server is a server process started for a benchmark.
type Server struct{ cmd *exec.Cmd }

// Start starts name with args and gives it a moment to listen.
func Start(name string, args ...string) (*Server, error) {
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	time.Sleep(500 * time.Millisecond)
	return &Server{cmd: cmd}, nil
}

// Stop ends the server by its process id.
func (s *Server) Stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// Output runs argv and returns its standard output.
func Output(argv []string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", Quote(argv), err, stderr.String())
	}
	return out, nil
}

// DecodeJSON decodes out into v, saying which command printed it when it
// is not JSON.
func DecodeJSON(out []byte, v any) error {
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("output is not JSON: %w", err)
	}
	return nil
}

// Quote joins argv into one line a shell would run as the same command.
func Quote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\;&|<>*?()[]{}") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// FreePort returns a TCP port free on 127.0.0.1 now.
func FreePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// ErrSkip says a tool is not installed; the benchmark goes on without it.
var ErrSkip = errors.New("not installed")

// Find returns the path of the program named by flagValue: a path, or a
// name looked up on PATH. It wraps ErrSkip when there is none.
func Find(flagValue string) (string, error) {
	p, err := exec.LookPath(flagValue)
	if err != nil {
		return "", fmt.Errorf("%s: %w (%v)", flagValue, ErrSkip, err)
	}
	return p, nil
}

// Netperf is a netserver started on a free port of 127.0.0.1 and the
// netperf that talks to it.
type Netperf struct {
	Netperf string // path of netperf
	Port    string // netserver's control port
	server  *Server
}

// NetperfHint is what to do when netperf is missing.
const NetperfHint = "build netperf and netserver from github.com/HewlettPackard/netperf " +
	"(./configure --enable-omni --enable-burst && make) and put them on PATH, or name netperf with -netperf"

// StartNetperf finds netperf (a path or a name on PATH) and netserver
// (beside it, or on PATH), and starts netserver in the foreground on a
// free port of 127.0.0.1, serving one test at a time (-f). It wraps
// ErrSkip when either program is missing. Stop ends netserver.
func StartNetperf(netperf string) (*Netperf, error) {
	np, err := Find(netperf)
	if err != nil {
		return nil, err
	}
	ns, err := Find(filepath.Join(filepath.Dir(np), "netserver"))
	if err != nil {
		if ns, err = Find("netserver"); err != nil {
			return nil, err
		}
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	srv, err := Start(ns, "-D", "-f", "-L", "127.0.0.1,inet", "-p", port)
	if err != nil {
		return nil, err
	}
	return &Netperf{Netperf: np, Port: port, server: srv}, nil
}

// Stop ends netserver.
func (n *Netperf) Stop() { n.server.Stop() }

// Argv is the netperf command for test with the global options global
// (after -H, -p, -t, -l, -P 0), the test-specific options specific, and
// keyval output of keys.
func (n *Netperf) Argv(test, secs string, global, specific, keys []string) []string {
	argv := []string{n.Netperf, "-H", "127.0.0.1", "-p", n.Port, "-t", test, "-l", secs, "-P", "0"}
	argv = append(argv, global...)
	argv = append(argv, "--")
	argv = append(argv, specific...)
	return append(argv, "-k", strings.Join(keys, ","))
}

// KeyVal reads netperf's -k output: KEY=value lines, the values that are
// numbers.
func KeyVal(out []byte) map[string]float64 {
	m := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			m[k] = f
		}
	}
	return m
}

// Need returns the values of keys in m, or an error naming the first one
// missing.
func Need(m map[string]float64, keys ...string) error {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("netperf output has no %s", k)
		}
	}
	return nil
}

// SystemSockbuf is the SO_SNDBUF/SO_RCVBUF value that, asked for, gives a
// socket the buffer it gets by default (net.core.rmem_default; the kernel
// doubles what it is asked for). It is for tools that would otherwise ask
// for a larger buffer of their own.
func SystemSockbuf() (int, error) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_default")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("net.core.rmem_default: %w", err)
	}
	return n / 2, nil
}

// Median of v; 0 for none.
func Median(v []float64) float64 { return Quantile(v, 0.5) }

// Quantile of v at q (0 to 1), linear between the closest ranks; 0 for
// none.
func Quantile(v []float64, q float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}

// Size reads a message size: bytes, or a number with K or M (powers of
// 1024, as all three tools read them).
func Size(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1024, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1024*1024, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want bytes, or a number with K or M", s)
	}
	return n * mult, nil
}

// List splits a comma-separated flag value, dropping empty items.
func List(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseWirespeed decodes wirespeed's --json output with the results
// schema itself (result.Decode), so that a renamed field breaks the
// bench's build instead of reading zeros.
func ParseWirespeed(out []byte) (result.Document, error) {
	return result.Decode(out)
}

// ServiceDemand is a side's service demand, per KB and per transaction;
// 0 when the side's CPU was not measured.
func ServiceDemand(c *measure.CPU) (perKB, perTransaction float64) {
	if c == nil {
		return 0, 0
	}
	return c.ServiceDemandMicrosPerKB, c.ServiceDemandMicrosPerTransaction
}

// Servers are the servers a bench runs its clients against, on
// 127.0.0.1: always wirespeed's, netperf's netserver and iperf3's when
// those tools are found. A nil NP or an empty IP means that tool is
// skipped (said on w when they were started).
type Servers struct {
	WSPort string   // wirespeed serve's port
	NP     *Netperf // nil when netperf is skipped
	IP     string   // iperf3's path, "" when skipped or not asked for
	IPPort string
	stops  []func()
}

// StartServers starts wirespeed serve from ws, netserver beside the
// netperf named by npFlag, and, when withIperf3, iperf3 -s from ipFlag.
// Stop ends all of them.
func StartServers(w io.Writer, ws, npFlag, ipFlag string, withIperf3 bool) (*Servers, error) {
	s := &Servers{}
	var err error
	if s.WSPort, err = FreePort(); err != nil {
		return nil, err
	}
	wsSrv, err := Start(ws, "serve", "--listen", "127.0.0.1:"+s.WSPort, "--log-level", "warn")
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, wsSrv.Stop)
	np, err := StartNetperf(npFlag)
	switch {
	case errors.Is(err, ErrSkip):
		fmt.Fprintf(w, "# netperf skipped: %v; %s\n", err, NetperfHint)
	case err != nil:
		s.Stop()
		return nil, err
	default:
		s.NP = np
		s.stops = append(s.stops, np.Stop)
	}
	if !withIperf3 {
		return s, nil
	}
	ip, err := Find(ipFlag)
	switch {
	case errors.Is(err, ErrSkip):
		fmt.Fprintf(w, "# iperf3 skipped: %v (Debian package iperf3)\n", err)
	case err != nil:
		s.Stop()
		return nil, err
	default:
		if s.IPPort, err = FreePort(); err != nil {
			s.Stop()
			return nil, err
		}
		srv, err := Start(ip, "-s", "-B", "127.0.0.1", "-p", s.IPPort)
		if err != nil {
			s.Stop()
			return nil, err
		}
		s.IP = ip
		s.stops = append(s.stops, srv.Stop)
	}
	return s, nil
}

// Stop ends every server StartServers started.
func (s *Servers) Stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}
