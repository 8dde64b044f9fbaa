package cli

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// serveUntilExit runs `wirespeed serve` with args on 127.0.0.1 until it
// exits or ctx ends, and returns its address, its logs and its exit
// code's channel once it listens.
func serveUntilExit(t *testing.T, ctx context.Context, args ...string) (string, *syncBuffer, <-chan int) {
	t.Helper()
	logs := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), &bytes.Buffer{}, logs)
	}()
	return waitLogAttr(t, logs, "listening", "addr"), logs, done
}

// TestServeOneOff: serve -1 serves one client's run (its two iterations
// on one connection), then exits 0 by itself; a client after it finds
// nothing listening. Connections that never became a test (the probes
// that wait for the listener) do not count.
func TestServeOneOff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, serveErr, done := serveUntilExit(t, ctx, "-1")
	// A connection that never becomes a test does not count.
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
	}
	code, out, errOut := execute(t, context.Background(), "run", addr, "-l", "0.2", "-i", "0", "--iterations", "2,2")
	if code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "iteration 2") {
		t.Errorf("the run did not make its two iterations:\n%s", out)
	}
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("serve -1 exit %d: %s", code, serveErr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve -1 did not exit after its test")
	}
	if n := strings.Count(serveErr.String(), "test done"); n != 2 {
		t.Errorf("serve logged %d tests, want the 2 iterations:\n%s", n, serveErr.String())
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("serve -1 still accepts after its test")
	}
}

// TestServeOneOffIperf3: an iperf3 client's test is the one test too.
func TestServeOneOffIperf3(t *testing.T) {
	bin, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("no iperf3 on this machine")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, serveErr, done := serveUntilExit(t, ctx, "--one-off")
	host, port, _ := net.SplitHostPort(addr)
	if out, err := exec.Command(bin, "-c", host, "-p", port, "-t", "1").CombinedOutput(); err != nil {
		t.Fatalf("iperf3: %v\n%s\nserver:\n%s", err, out, serveErr.String())
	}
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("serve --one-off exit %d: %s", code, serveErr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve --one-off did not exit after an iperf3 test:\n%s", serveErr.String())
	}
}
