package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// stopAsync cancels the server and returns a channel that receives how
// long Serve took to return.
func stopAsync(srv *testServer) <-chan time.Duration {
	took := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		srv.stop()
		took <- time.Since(start)
	}()
	return took
}

// TestShutdownLetsRunningTestsFinish: with a shutdown timeout, a running
// test ends normally, a new test is refused, and Serve returns once the
// running test is done.
func TestShutdownLetsRunningTestsFinish(t *testing.T) {
	srv := startServer(t, server.Config{MaxTests: 2, ShutdownTimeout: 20 * time.Second})
	a := mustDial(t, client.Config{Addr: srv.addr})
	b := mustDial(t, client.Config{Addr: srv.addr})
	sp := shortSpec(spec.TCPStream, 1)
	sp.Duration = 1500 * time.Millisecond
	type outcome struct {
		res result.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := a.Run(context.Background(), sp)
		done <- outcome{res, err}
	}()
	time.Sleep(300 * time.Millisecond)
	took := stopAsync(srv)
	srv.logs.waitLog(t, "shutting down: running tests may finish")

	_, err := b.Run(context.Background(), shortSpec(spec.TCPStream, 1))
	if !errors.Is(err, control.ErrBusy) || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("new test while draining: got %v, want busy: shutting down", err)
	}
	r := <-done
	if r.err != nil || r.res.Interrupted {
		t.Errorf("running test: %v, interrupted %v; want it to finish", r.err, r.res.Interrupted)
	}
	select {
	case d := <-took:
		if d > 10*time.Second {
			t.Errorf("Serve returned %v after the stop", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return")
	}
}

// TestShutdownTimeoutAborts: a test longer than the shutdown timeout is
// aborted at the timeout; the client still gets the partial result.
func TestShutdownTimeoutAborts(t *testing.T) {
	srv := startServer(t, server.Config{ShutdownTimeout: 700 * time.Millisecond})
	c := mustDial(t, client.Config{Addr: srv.addr})
	sp := shortSpec(spec.TCPBidir, 1)
	sp.Duration = 20 * time.Second
	go func() {
		time.Sleep(300 * time.Millisecond)
		stopAsync(srv)
	}()
	start := time.Now()
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatalf("got %v, want the partial result", err)
	}
	if !res.Interrupted || res.Summary.Bytes == 0 {
		t.Errorf("interrupted %v, %d bytes; want a partial result", res.Interrupted, res.Summary.Bytes)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the run took %v with a 700ms shutdown timeout", d)
	}
	srv.logs.waitLog(t, "shutdown timeout: aborting running tests")
}

// flakyListener fails its first accepts the way a process out of file
// descriptors does.
type flakyListener struct {
	net.Listener
	fails int
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestAcceptOutOfDescriptors: running out of file descriptors (a flood of
// connections) pauses accepting instead of stopping the server.
func TestAcceptOutOfDescriptors(t *testing.T) {
	ln := testkit.Listen(t)
	logs := &logBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.New(server.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}).Serve(ctx, &flakyListener{Listener: ln, fails: 5})
	}()
	c := mustDial(t, client.Config{Addr: ln.Addr().String()})
	if _, err := c.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
		t.Errorf("after accept errors: %v", err)
	}
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	logs.waitLog(t, "accept failed, retrying", "too many open files")
}
