package httplimit

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serve serves h with l on 127.0.0.1 through Server and Listener and
// returns the address and the count of connections open.
func serve(t *testing.T, h http.Handler, l Limits) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var open atomic.Int64
	srv := Server(h, l, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(Listener(ln, l.MaxConns, &open)) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return ln.Addr().String(), &open
}

// request sends one GET on c and reads the answer, leaving c open.
func request(t *testing.T, c net.Conn, br *bufio.Reader) int {
	t.Helper()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	return err == nil || !errors.Is(err, os.ErrDeadlineExceeded)
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })

// TestIdleMakeRoom: with MaxConns connections open and idle after an
// answer (a client holding keep-alive connections), a new client's
// request is answered at once, one idle connection, the oldest, closed
// for it; never more than MaxConns are open. Without the idle
// connections closed, the request would wait for IdleTimeout (a
// minute here).
func TestIdleMakeRoom(t *testing.T) {
	const maxConns = 4
	addr, open := serve(t, ok, Limits{MaxConns: maxConns, IdleTimeout: time.Minute})
	var idle []net.Conn
	for i := range maxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if code := request(t, c, bufio.NewReader(c)); code != 200 {
			t.Fatalf("request %d: %d", i, code)
		}
		idle = append(idle, c)
		time.Sleep(10 * time.Millisecond) // the first is the oldest idle
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			peak.Store(max(peak.Load(), open.Load()))
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	start := time.Now()
	for i := range 2 * maxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if code := request(t, c, bufio.NewReader(c)); code != 200 {
			t.Fatalf("new client %d: %d", i, code)
		}
		c.Close()
	}
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if took > 5*time.Second {
		t.Errorf("%d new clients behind %d idle connections answered in %v: idle connections kept them out", 2*maxConns, maxConns, took.Round(time.Millisecond))
	}
	if p := peak.Load(); p > maxConns {
		t.Errorf("%d connections open at once, want at most %d", p, maxConns)
	}
	if !closedWithin(idle[0], time.Second) {
		t.Errorf("the connection idle longest is still open")
	}
	t.Logf("%d new clients answered in %v behind %d idle connections; peak %d open", 2*maxConns, took.Round(time.Millisecond), maxConns, peak.Load())
}

// TestSilentNotClosedForAnother: connections that have not sent their
// first request are not closed to make room (they may be a browser's
// about to ask); ReadHeaderTimeout bounds them, and a request behind
// them is answered when they go.
func TestSilentNotClosedForAnother(t *testing.T) {
	const maxConns = 3
	const header = 500 * time.Millisecond
	addr, _ := serve(t, ok, Limits{MaxConns: maxConns, ReadHeaderTimeout: header})
	for range maxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); took < header-100*time.Millisecond || took > header+3*time.Second {
		t.Errorf("a request behind %d silent connections answered after %v, want about ReadHeaderTimeout %v", maxConns, took.Round(time.Millisecond), header)
	}
}

// TestConcurrent: with n requests being answered, one more is answered
// 503 at once with Retry-After; when they are done, the next is served.
func TestConcurrent(t *testing.T) {
	const n = 2
	release := make(chan struct{})
	var in sync.WaitGroup
	in.Add(n)
	h := Concurrent(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			in.Done()
			<-release
		}
		io.WriteString(w, "ok\n")
	}), n)
	addr, _ := serve(t, h, Limits{})
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			resp, err := http.Get("http://" + addr + "/slow")
			if err != nil {
				t.Error(err)
				return
			}
			codes[i] = resp.StatusCode
			resp.Body.Close()
		})
	}
	in.Wait()
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("request %d of %d at once: %d, Retry-After %q (%s), want 503 with Retry-After 1", n+1, n, resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(release)
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("slow request %d: %d", i, c)
		}
	}
	resp, err = http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a request after the others: %d", resp.StatusCode)
	}
}
