package server_test

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/servertest"
	"wirespeed/internal/spec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// logBuffer collects a server's log lines; safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitLog waits up to 5s for a log line containing every one of want.
func (l *logBuffer) waitLog(t *testing.T, want ...string) string {
	t.Helper()
	return l.waitLogWithin(t, 5*time.Second, want...)
}

// waitLogWithin waits up to d for a log line containing every one of want.
func (l *logBuffer) waitLogWithin(t *testing.T, d time.Duration, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		for _, line := range strings.Split(l.String(), "\n") {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(line, w)
			}
			if ok {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("no log line with %q in:\n%s", want, l.String())
			return ""
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type testServer struct {
	addr string
	logs *logBuffer
	stop func() // cancels Serve and waits for it to return
}

// startServer runs a server on 127.0.0.1:0 until stop is called or the
// test ends.
func startServer(t *testing.T, cfg server.Config) *testServer {
	t.Helper()
	ts := &testServer{logs: &logBuffer{}}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(ts.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ts.addr, ts.stop = servertest.Start(t, cfg)
	// Wait until Serve accepts: a connection that ends at once is closed
	// by the server only once its accept loop runs.
	probe, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	probe.(*net.TCPConn).CloseWrite()
	closedByServer(probe, 5*time.Second)
	probe.Close()
	return ts
}

func dial(t *testing.T, cfg client.Config) (*client.Client, error) {
	t.Helper()
	return servertest.TryDial(t, cfg)
}

func mustDial(t *testing.T, cfg client.Config) *client.Client {
	t.Helper()
	return servertest.Dial(t, cfg)
}

func shortSpec(kind spec.Kind, parallel int) spec.Test {
	sp := spec.Default()
	sp.Kind = kind
	sp.Parallel = parallel
	sp.Duration = 400 * time.Millisecond
	sp.Interval = 0
	return sp
}

// rawConn opens a control connection from local (an IP on loopback, ""
// for any) and sends the preamble and hello; the caller reads the answer.
func rawConn(t *testing.T, addr, local string, hello control.Hello) *control.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cc := control.NewConn(c, 0)
	if err := cc.WriteMagic(); err != nil {
		t.Fatal(err)
	}
	if err := cc.Send(control.TypeHello, hello); err != nil {
		t.Fatal(err)
	}
	return cc
}

// helloBack reads the server's preamble and hello.
func helloBack(t *testing.T, cc *control.Conn) (control.Hello, error) {
	t.Helper()
	if err := cc.ReadMagic(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	var h control.Hello
	err := cc.Expect(control.TypeHello, &h, 5*time.Second)
	return h, err
}

// closedByServer reports whether the server closes c (EOF or reset)
// within d without sending it anything, and how many bytes it sent.
func closedByServer(c net.Conn, d time.Duration) (closed bool, got int) {
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		got += n
		if err != nil {
			return !os.IsTimeout(err), got
		}
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(ents)
}

// waitFDs waits up to 10s for the open descriptors to come back to at
// most base.
func waitFDs(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := openFDs(t)
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d descriptors open, %d before: sockets leaked", n, base)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var testKey = []byte("wirespeed-test-key-0123456789abcdef")
