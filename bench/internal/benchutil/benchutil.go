// Package benchutil holds what the side-by-side benchmarks share: starting
// servers on loopback and stopping them by process, running a command for
// its JSON output, and medians.
package benchutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strconv"
	"syscall"
	"time"
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

// Output runs name with args and returns its standard output.
func Output(name string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %v: %w: %s", name, args, err, stderr.String())
	}
	return out, nil
}

// JSON runs name with args and decodes its output into v.
func JSON(v any, name string, args ...string) error {
	out, err := Output(name, args...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("%s %v: output is not JSON: %w", name, args, err)
	}
	return nil
}

// Median of v; 0 for none.
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	switch n := len(s); {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	default:
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// FreePort returns a TCP port free on 127.0.0.1 now.
func FreePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
