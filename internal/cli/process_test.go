package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"wirespeed/internal/client"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/servertest"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// Process-level tests: the wirespeed binary, built into the test's
// temporary directory, killed with SIGKILL or stopped with SIGTERM while
// a test runs against this process.

// buildBinary builds cmd/wirespeed once per test run, into a temporary
// directory that TestMain removes.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	built.once.Do(func() {
		// go test puts its own go first on the PATH of the tests.
		goTool, err := exec.LookPath("go")
		if err != nil {
			built.err = fmt.Errorf("find the go command to build wirespeed: %w", err)
			return
		}
		dir, err := os.MkdirTemp("", "wirespeed-cli-test")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.bin = filepath.Join(dir, "wirespeed")
		out, err := exec.Command(goTool, "build", "-o", built.bin, "../../cmd/wirespeed").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.StopPostgres()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// proc is a running wirespeed process and its stderr, line by line.
type proc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan struct{} // closed when the process exited
	err   error         // its exit error, once done
}

func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = io.Discard
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// waitLine waits up to 10s for a stderr line matching re and returns its
// first submatch (or the line).
func (p *proc) waitLine(t *testing.T, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(p.log()); m != nil {
			return m[len(m)-1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no line matching %s in:\n%s", re, p.log())
	return ""
}

// exitWithin waits for the process to exit and returns its exit code.
func (p *proc) exitWithin(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("process still running after %v:\n%s", d, p.log())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// settle waits until the goroutines started since base have ended.
func settle(t *testing.T, base goleak.Option) {
	t.Helper()
	testkit.CheckNoLeaks(t, 10*time.Second, base)
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(ents)
}

func waitFDs(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for countFDs(t) > base {
		if time.Now().After(deadline) {
			t.Errorf("%d descriptors open, %d before: sockets leaked", countFDs(t), base)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServerKilledMidTest: SIGKILL the server process in the middle of a
// test; the client returns within seconds with an error saying the server
// went away, and leaves no goroutine or socket behind.
func TestServerKilledMidTest(t *testing.T) {
	bin := buildBinary(t)
	kinds := []spec.Test{}
	for _, k := range []spec.Kind{spec.TCPBidir, spec.UDPStream, spec.TCPRR, spec.UDPRR, spec.TCPCRR} {
		sp := spec.Default()
		sp.Kind = k
		sp.Parallel = 2
		sp.Duration = 30 * time.Second
		if k == spec.UDPStream {
			sp.SendSize, sp.RateBitsPerSecond = spec.DefaultUDPSize, 100e6
		}
		kinds = append(kinds, sp)
	}
	for _, sp := range kinds {
		t.Run(string(sp.Kind), func(t *testing.T) {
			base := goleak.IgnoreCurrent()
			fds := countFDs(t)
			p := startProc(t, bin, "serve", "--listen", "127.0.0.1:0")
			addr := p.waitLine(t, `msg=listening addr=(\S+)`)

			c, err := client.Dial(context.Background(), client.Config{Addr: addr, Tool: "test"})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.Run(context.Background(), sp)
				done <- err
			}()
			time.Sleep(time.Second)
			p.cmd.Process.Signal(syscall.SIGKILL)
			killed := time.Now()
			select {
			case err = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the client did not notice the killed server within 15s")
			}
			if err == nil || !strings.Contains(err.Error(), "stopped or was killed") {
				t.Errorf("client error %v, want one saying the server stopped or was killed", err)
			}
			t.Logf("client returned %v after the kill: %v", time.Since(killed).Round(time.Millisecond), err)
			c.Close()
			p.exitWithin(t, 5*time.Second)
			settle(t, base)
			waitFDs(t, fds)
		})
	}
}

// TestClientKilledMidTest: SIGKILL the client process in the middle of a
// test; the server logs the failed test within seconds, frees its slot
// for the next client, and leaves no goroutine or socket behind.
func TestClientKilledMidTest(t *testing.T) {
	bin := buildBinary(t)
	base := goleak.IgnoreCurrent()
	fds := countFDs(t)
	logs := &syncBuffer{}
	addr, stop := servertest.Start(t, server.Config{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})

	for _, kind := range []string{"TCP_STREAM", "TCP_MAERTS", "TCP_BIDIR", "UDP_STREAM -b 200M", "UDP_STREAM -R -b 200M", "TCP_RR", "UDP_RR", "TCP_CRR"} {
		t.Run(kind, func(t *testing.T) {
			before := strings.Count(logs.String(), `msg="test done"`)
			started := strings.Count(logs.String(), `msg="test started"`)
			args := append([]string{"run", addr, "-t"}, strings.Fields(kind)...)
			p := startProc(t, bin, append(args, "-P", "2", "-l", "30", "-i", "0")...)
			for deadline := time.Now().Add(15 * time.Second); strings.Count(logs.String(), `msg="test started"`) == started; {
				if time.Now().After(deadline) {
					t.Fatalf("the client's test did not start:\n%s", logs.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			p.cmd.Process.Signal(syscall.SIGKILL)
			killed := time.Now()
			deadline := killed.Add(15 * time.Second)
			for strings.Count(logs.String(), `msg="test done"`) == before {
				if time.Now().After(deadline) {
					t.Fatalf("no test line 15s after the client was killed:\n%s", logs.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			var last string
			for _, l := range lines {
				if strings.Contains(l, `msg="test done"`) {
					last = l
				}
			}
			if !strings.Contains(last, "result=failed") || !strings.Contains(last, "peer=127.0.0.1:") {
				t.Errorf("test line %q, want a failure with the peer", last)
			}
			t.Logf("server logged the failure %v after the kill", time.Since(killed).Round(time.Millisecond))
			p.exitWithin(t, 5*time.Second)
			// The slot is free: the next client runs at once.
			c := servertest.Dial(t, client.Config{Addr: addr})
			sp := spec.Default()
			sp.Duration = 300 * time.Millisecond
			if _, err := c.Run(context.Background(), sp); err != nil {
				t.Errorf("next test: %v", err)
			}
			c.Close()
		})
	}
	stop()
	settle(t, base)
	waitFDs(t, fds)
}

// TestServeSIGTERM: SIGTERM lets a running test finish within
// --shutdown-timeout, or cuts a longer one short at the timeout with its
// partial result still delivered; either way the server exits 0.
func TestServeSIGTERM(t *testing.T) {
	bin := buildBinary(t)
	tests := []struct {
		name            string
		shutdownTimeout string
		length          time.Duration
		wantInterrupted bool
	}{
		{name: "test finishes", shutdownTimeout: "20s", length: 2 * time.Second},
		{name: "test cut short", shutdownTimeout: "500ms", length: 30 * time.Second, wantInterrupted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProc(t, bin, "serve", "--listen", "127.0.0.1:0", "--shutdown-timeout", tt.shutdownTimeout)
			addr := p.waitLine(t, `msg=listening addr=(\S+)`)
			c := servertest.Dial(t, client.Config{Addr: addr})
			defer c.Close()
			sp := spec.Default()
			sp.Kind = spec.TCPBidir
			sp.Duration = tt.length
			type outcome struct {
				res result.Result
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := c.Run(context.Background(), sp)
				done <- outcome{res, err}
			}()
			time.Sleep(500 * time.Millisecond)
			p.cmd.Process.Signal(syscall.SIGTERM)
			var r outcome
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("no result within 20s of SIGTERM")
			}
			if r.err != nil {
				t.Fatalf("run: %v", r.err)
			}
			if r.res.Interrupted != tt.wantInterrupted || r.res.Summary.Bytes == 0 {
				t.Errorf("interrupted %v with %d bytes, want interrupted %v", r.res.Interrupted, r.res.Summary.Bytes, tt.wantInterrupted)
			}
			c.Close()
			if code := p.exitWithin(t, 15*time.Second); code != 0 {
				t.Errorf("serve exited %d after SIGTERM, want 0:\n%s", code, p.log())
			}
			if !strings.Contains(p.log(), "msg=stopped") {
				t.Errorf("no stopped line:\n%s", p.log())
			}
		})
	}
}
