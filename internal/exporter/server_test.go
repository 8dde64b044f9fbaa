package exporter

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// serve serves h's exporter as the CLI does, with Server and Listener, on
// 127.0.0.1, and returns the address.
func serve(t *testing.T, h *harness) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := h.x.Server(nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(h.x.Listener(ln)) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return ln.Addr().String()
}

// closedWithin reports whether the server closes c within d, reading and
// dropping whatever comes meanwhile.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	return err == nil || !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestServerLimits (issue 47, item 8): a keep-alive connection idle after
// its answer is closed after IdleTimeout, one that never sends its
// request after ReadHeaderTimeout, and no more than MaxConns are open at
// once: a request past the limit waits for a connection to close and is
// answered then. Before, only ReadHeaderTimeout was set: 200 idle
// connections of 200 were still open after 150 s, and their number had
// no bound.
func TestServerLimits(t *testing.T) {
	const maxConns = 4
	const idle, header = 300 * time.Millisecond, 600 * time.Millisecond
	h := newHarness(t, twoModules, func(o *Options) {
		o.MaxConns, o.IdleTimeout, o.ReadHeaderTimeout = maxConns, idle, header
	})
	addr := serve(t, h)

	// Idle after an answer: closed after IdleTimeout.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	idleFrom := time.Now()
	if !closedWithin(c, idle+2*time.Second) {
		t.Fatalf("a keep-alive connection still open %v after its answer, IdleTimeout %v", time.Since(idleFrom).Round(time.Millisecond), idle)
	}

	// Connections that send nothing: at most maxConns open; a request
	// past them is answered once the server drops the silent ones.
	var silent []net.Conn
	for range 2 * maxConns {
		s, err := net.Dial("tcp", addr) // the kernel completes it: the backlog
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		silent = append(silent, s)
	}
	start := time.Now()
	peak := int64(0)
	answered := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	var took time.Duration
	for took == 0 {
		peak = max(peak, h.x.conns.Load())
		select {
		case err := <-answered:
			if err != nil {
				t.Fatal(err)
			}
			took = time.Since(start)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("a request behind silent connections unanswered after 10 s")
		}
	}
	if peak > maxConns {
		t.Errorf("%d connections open at once, want at most %d", peak, maxConns)
	}
	if took < header-100*time.Millisecond {
		t.Errorf("a request behind %d silent connections answered after %v: the limit of %d did not hold it", 2*maxConns, took.Round(time.Millisecond), maxConns)
	}
	for i, s := range silent {
		if !closedWithin(s, 3*header+time.Second) {
			t.Errorf("silent connection %d still open after %v, ReadHeaderTimeout %v", i, time.Since(start).Round(time.Millisecond), header)
		}
	}
	t.Logf("peak %d connections open; the request past them answered after %v", peak, took.Round(time.Millisecond))
}
