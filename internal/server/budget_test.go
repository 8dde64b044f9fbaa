package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/iperf3"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// heapPeak samples the Go heap in use every 10 ms until stop is called,
// which returns the highest figure seen above the figure at the start.
func heapPeak() (stop func() int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	peak.Store(base)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return int64(peak.Load()) - int64(base)
	}
}

// hostileIperf3 speaks iperf3's client side by hand, as a client that
// asks for what the real iperf3 will not (its -l stops at 1 MiB): 32
// streams of 64 MiB blocks. It returns the state the server answered the
// parameters with. When the server accepts, it opens the streams, waits
// for TEST_RUNNING and holds the test for hold, sending nothing.
func hostileIperf3(t *testing.T, addr string, hold time.Duration) iperf3.State {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cookie := iperf3.NewCookie()
	state := func() iperf3.State {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			t.Fatalf("read iperf3 state: %v", err)
		}
		return iperf3.State(int8(b[0]))
	}
	c.Write(cookie[:])
	if s := state(); s != iperf3.ParamExchange {
		t.Fatalf("server sent %v, want PARAM_EXCHANGE", s)
	}
	params := fmt.Sprintf(`{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":32,"len":%d}`, 64<<20)
	msg := binary.BigEndian.AppendUint32(nil, uint32(len(params)))
	c.Write(append(msg, params...))
	s := state()
	if s != iperf3.CreateStreams {
		return s
	}
	for range 32 {
		d, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		d.Write(cookie[:])
	}
	for _, want := range []iperf3.State{iperf3.TestStart, iperf3.TestRunning} {
		if s := state(); s != want {
			t.Fatalf("server sent %v, want %v", s, want)
		}
	}
	time.Sleep(hold)
	return iperf3.CreateStreams
}

// TestMemoryBudget: a test whose buffers are over --max-test-memory is
// refused before anything is allocated, whether it comes from an iperf3
// client (-P 32 with 64 MiB blocks: 2 GiB of receive buffers) or from a
// wirespeed client (-M 64M -P 32); the refusal names the limit and the
// flag. Tests within it run, and the running tests together stay within
// --max-memory: a second test that would go over it is told the server
// is busy, naming that flag.
func TestMemoryBudget(t *testing.T) {
	const perTest = 64 << 20
	srv := startServer(t, server.Config{MaxTests: 2, Admission: server.Admission{MaxTestMemory: perTest, MaxMemory: 96 << 20}})

	t.Run("iperf3 -P 32 with 64 MiB blocks", func(t *testing.T) {
		peak := heapPeak()
		s := hostileIperf3(t, srv.addr, 500*time.Millisecond)
		grew := peak()
		t.Logf("server answered the parameters with %v; heap grew by %d MiB at most", s, grew>>20)
		if s != iperf3.ServerError {
			t.Errorf("server answered %v, want SERVER_ERROR", s)
		}
		if grew > perTest {
			t.Errorf("the heap grew by %d MiB, over the per-test budget of %d MiB", grew>>20, perTest>>20)
		}
		srv.logs.waitLog(t, "iperf3 test failed", "--max-test-memory")
	})

	c := mustDial(t, client.Config{Addr: srv.addr})
	t.Run("wirespeed -M 64M -P 32", func(t *testing.T) {
		sp := shortSpec(spec.TCPStream, 32)
		sp.RecvSize = 64 << 20
		peak := heapPeak()
		_, err := c.Run(context.Background(), sp)
		grew := peak()
		t.Logf("heap grew by %d MiB at most", grew>>20)
		if !errors.Is(err, control.ErrLimit) || !strings.Contains(err.Error(), "--max-test-memory") {
			t.Fatalf("got %v, want ErrLimit naming --max-test-memory", err)
		}
		if grew > perTest {
			t.Errorf("the heap grew by %d MiB, over the per-test budget of %d MiB", grew>>20, perTest>>20)
		}
	})

	t.Run("server-wide", func(t *testing.T) {
		// 8 streams of 7 MiB receive buffers: 56 MiB, within the per-test
		// budget; two at once are over the server's 96 MiB.
		sp := shortSpec(spec.TCPStream, 8)
		sp.RecvSize = 7 << 20
		sp.Duration = 2 * time.Second
		first := make(chan error, 1)
		go func() {
			_, err := c.Run(context.Background(), sp)
			first <- err
		}()
		srv.logs.waitLog(t, "test started")
		other := mustDial(t, client.Config{Addr: srv.addr})
		_, err := other.Run(context.Background(), sp)
		if !errors.Is(err, control.ErrBusy) || !strings.Contains(err.Error(), "--max-memory") {
			t.Errorf("second test: got %v, want ErrBusy naming --max-memory", err)
		}
		if err := <-first; err != nil {
			t.Fatalf("first test: %v", err)
		}
		if _, err := other.Run(context.Background(), sp); err != nil {
			t.Errorf("the same test once the first ended: %v", err)
		}
	})
}
