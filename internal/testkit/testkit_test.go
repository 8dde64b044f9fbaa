package testkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// recorder is a testing.TB whose failures are recorded instead of
// failing the test; Fatal ends the calling goroutine as testing's does.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	fails   []string
	skipped string
}

func (r *recorder) fail(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fails = append(r.fails, s)
}
func (r *recorder) Error(a ...any)            { r.fail(fmt.Sprint(a...)) }
func (r *recorder) Errorf(f string, a ...any) { r.fail(fmt.Sprintf(f, a...)) }
func (r *recorder) Fatal(a ...any)            { r.fail(fmt.Sprint(a...)); runtime.Goexit() }
func (r *recorder) Fatalf(f string, a ...any) { r.fail(fmt.Sprintf(f, a...)); runtime.Goexit() }
func (r *recorder) Skipf(f string, a ...any) {
	r.mu.Lock()
	r.skipped = fmt.Sprintf(f, a...)
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) failures() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.fails, "\n")
}
func (r *recorder) run(f func(testing.TB)) *recorder {
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	return r
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("testdata/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile("testdata/sub/a.txt.golden", []byte("one\ntwo\n"), 0o644)

	if f := (&recorder{TB: t}).run(func(t testing.TB) { Golden(t, "sub/a.txt.golden", "one\ntwo\n") }).failures(); f != "" {
		t.Errorf("the same text failed: %s", f)
	}
	f := (&recorder{TB: t}).run(func(t testing.TB) { Golden(t, "sub/a.txt.golden", "one\nthree\n") }).failures()
	if !strings.Contains(f, "testdata/sub/a.txt.golden differs") || !strings.Contains(f, `"one\nthree\n"`) {
		t.Errorf("a different text: the failure does not name the file or show the diff:\n%s", f)
	}
	if b, err := os.ReadFile("testdata/sub/a.txt.got"); err != nil || string(b) != "one\nthree\n" {
		t.Errorf("testdata/sub/a.txt.got = %q, %v; want what the test got", b, err)
	}
	f = (&recorder{TB: t}).run(func(t testing.TB) { Golden(t, "missing.golden", "x") }).failures()
	if !strings.Contains(f, "-update to create it") {
		t.Errorf("a missing golden file: %s", f)
	}

	*update = true
	defer func() { *update = false }()
	if f := (&recorder{TB: t}).run(func(t testing.TB) { Golden(t, "new/b.json", "{}\n") }).failures(); f != "" {
		t.Errorf("-update failed: %s", f)
	}
	if b, _ := os.ReadFile("testdata/new/b.json"); string(b) != "{}\n" {
		t.Errorf("-update wrote %q", b)
	}
}

func TestPackageDir(t *testing.T) {
	if got := packageDir(); got != "./internal/testkit" {
		t.Errorf("packageDir() = %q, want ./internal/testkit", got)
	}
}

func TestListenClosedAtCleanup(t *testing.T) {
	var addr string
	t.Run("inner", func(t *testing.T) {
		ln := Listen(t)
		addr = ln.Addr().String()
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("listening on %s, want 127.0.0.1", addr)
		}
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial the listener while the test runs: %v", err)
		}
		c.Close()
	})
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after the test", addr)
	}
	if c, err := net.Dial("tcp", FreeAddr(t)); err == nil {
		c.Close()
		t.Error("something listens on FreeAddr's address")
	}
}

func TestTCPPair(t *testing.T) {
	a, b := TCPPair(t)
	if a.LocalAddr().String() != b.RemoteAddr().String() {
		t.Errorf("not the two ends of one connection: %v -> %v, %v <- %v", a.LocalAddr(), a.RemoteAddr(), b.LocalAddr(), b.RemoteAddr())
	}
	if _, err := a.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := b.Read(buf); err != nil || string(buf) != "ping" {
		t.Errorf("read %q, %v", buf, err)
	}
}

func TestServe(t *testing.T) {
	var served atomic.Int64
	addr, stop := Serve(t, func(ctx context.Context, ln net.Listener) error {
		context.AfterFunc(ctx, func() { ln.Close() })
		for {
			c, err := ln.Accept()
			if err != nil {
				return nil
			}
			served.Add(1)
			c.Close()
		}
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if !WaitFor(5*time.Second, func() bool { return served.Load() == 1 }) {
		t.Errorf("served %d connections, want 1", served.Load())
	}
	stop()
	stop()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("still listening after stop")
	}

	// An error from serve fails the test.
	f := (&recorder{TB: t}).run(func(t testing.TB) {
		_, stop := Serve(t, func(ctx context.Context, ln net.Listener) error {
			<-ctx.Done()
			return errors.New("broken")
		})
		stop()
	}).failures()
	if f != "serve: broken" {
		t.Errorf("serve returning an error: failures %q", f)
	}
}

func TestWaitFor(t *testing.T) {
	start := time.Now()
	if WaitFor(50*time.Millisecond, func() bool { return false }) {
		t.Error("WaitFor reported a condition that never held")
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
		t.Errorf("WaitFor(50ms) gave up after %v", d)
	}
	n := 0
	if !WaitFor(5*time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("WaitFor stopped after %d calls, want 3", n)
	}
}

func TestCheckNoLeaks(t *testing.T) {
	base := goleak.IgnoreCurrent()
	block := make(chan struct{})
	go func() { <-block }()
	f := (&recorder{TB: t}).run(func(t testing.TB) { CheckNoLeaks(t, 100*time.Millisecond, base) }).failures()
	if !strings.Contains(f, "TestCheckNoLeaks") {
		t.Errorf("a goroutine still blocked: failures %q, want its stack", f)
	}
	close(block)
	if f := (&recorder{TB: t}).run(func(t testing.TB) { CheckNoLeaks(t, 5*time.Second, base) }).failures(); f != "" {
		t.Errorf("after the goroutine ended: %s", f)
	}
}

var sink []byte

// workload runs a goroutine doing units of work, each allocating perUnit
// 64-byte slices, until stopped.
func workload(perUnit int) (start func(), progress func() int64, stop func()) {
	var n atomic.Int64
	var quit atomic.Bool
	done := make(chan struct{})
	start = func() {
		go func() {
			defer close(done)
			for !quit.Load() {
				for range perUnit {
					sink = make([]byte, 64)
				}
				n.Add(1)
			}
		}()
	}
	return start, n.Load, func() { quit.Store(true); <-done }
}

func TestCountAllocs(t *testing.T) {
	// A unit that allocates twice: about twice as many allocations as
	// units; the slack is the test's own goroutine and the runtime's.
	start, progress, stop := workload(2)
	allocs, n := CountAllocs(t, 100_000, 0, start, progress, stop)
	if n < 100_000 {
		t.Errorf("returned after %d units, want at least 100000", n)
	}
	if allocs < 2*uint64(n) || allocs > 2*uint64(n)+200 {
		t.Errorf("%d allocations for %d units of 2, want %d to %d", allocs, n, 2*n, 2*n+200)
	}
	start, progress, stop = workload(0)
	allocs, n = CountAllocs(t, 100_000, 50*time.Millisecond, start, progress, stop)
	if allocs > 200 {
		t.Errorf("%d allocations for %d units of none", allocs, n)
	}
}

// TestFreePorts: the kernel lets TCP and UDP listen on each port of the
// run FreePorts returns, and a port held by either protocol is never in
// a run.
func TestFreePorts(t *testing.T) {
	listenBoth := func(t *testing.T, base, n int) {
		t.Helper()
		for p := base; p < base+n; p++ {
			a := fmt.Sprintf("127.0.0.1:%d", p)
			ln, err := net.Listen("tcp", a)
			if err != nil {
				t.Fatalf("run %d..%d: TCP cannot listen on %d: %v", base, base+n-1, p, err)
			}
			defer ln.Close()
			pc, err := net.ListenPacket("udp", a)
			if err != nil {
				t.Fatalf("run %d..%d: UDP cannot listen on %d: %v", base, base+n-1, p, err)
			}
			defer pc.Close()
		}
	}
	base := FreePorts(t, 3)
	if base < 20000 || base+2 > 65535 {
		t.Errorf("FreePorts(3) = %d, want a run of 3 ports from 20000 up", base)
	}
	listenBoth(t, base, 3)

	// A port one protocol holds, searched for from the port before it:
	// the runs from there and from the held port both hold it.
	ln := Listen(t)
	held := ln.Addr().(*net.TCPAddr).Port
	if base := freePortsFrom(t, held-1, 3); base <= held {
		t.Errorf("port %d held for TCP: got the run from %d", held, base)
	} else {
		listenBoth(t, base, 3)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	held = pc.LocalAddr().(*net.UDPAddr).Port
	if base := freePortsFrom(t, held-1, 3); base <= held {
		t.Errorf("port %d held for UDP: got the run from %d", held, base)
	} else {
		listenBoth(t, base, 3)
	}
}
