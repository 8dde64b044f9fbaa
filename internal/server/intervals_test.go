package server_test

import (
	"context"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// TestIntervalsInBudget: interval records are counted in the memory
// budget. TCP_BIDIR -P 32 -i 0.01 -m 1 -M 1 was counted as 34 bytes of
// buffers and accepted under --max-test-memory 1M, then grew the server
// by 5.3 MB a test-second (issue 32); now it is refused, naming -i and -P.
func TestIntervalsInBudget(t *testing.T) {
	srv := startServer(t, server.Config{Admission: server.Admission{MaxTestMemory: 1 << 20, MaxMemory: 4 << 20}})
	c := mustDial(t, client.Config{Addr: srv.addr})
	defer c.Close()
	sp := spec.Default()
	sp.Kind, sp.Parallel, sp.Interval, sp.SendSize, sp.RecvSize, sp.Duration = spec.TCPBidir, 32, 10*time.Millisecond, 1, 1, time.Minute
	_, err := c.Run(context.Background(), sp)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"interval records", "-i", "-P", "--max-test-memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	srv.logs.waitLog(t, "test refused", "reason=max_test_memory")
}

// TestIntervalsOverFrameRefused: a client that does not take intervals as
// they come is refused a test whose result would be over the frame limit,
// instead of running it and failing at its end with the result unsent.
func TestIntervalsOverFrameRefused(t *testing.T) {
	srv := startServer(t, server.Config{})
	cc := rawConn(t, srv.addr, "", control.NewHello("raw", ""))
	if _, err := helloBack(t, cc); err != nil {
		t.Fatal(err)
	}
	sp := spec.Default()
	sp.Kind, sp.Parallel, sp.Interval, sp.Duration = spec.TCPStream, 8, 10*time.Millisecond, 30*time.Second
	cc.Send(control.TypeTest, control.TestRequest{Spec: sp})
	err := cc.Expect(control.TypeAccepted, nil, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "control message limit") || !strings.Contains(err.Error(), "-i") || !strings.Contains(err.Error(), "-P") {
		t.Fatalf("got %v, want a refusal naming the frame limit, -i and -P", err)
	}
}

// TestLongHighRateIntervals: a legitimate run whose intervals are more
// than a result frame holds works, and its result has every interval of
// both sides. run -P 8 -i 0.01 -l 30 failed with "the server closed the
// control connection ... EOF" while the server logged result=ok; this is
// the same over 10 s with 32 streams (33,000 records, about 4 MB of JSON,
// twice the 2 MiB frame).
func TestLongHighRateIntervals(t *testing.T) {
	if raceEnabled {
		// 32 streams sampled every 10 ms under the race detector's
		// instrumentation: a 10 s run took 30 s on 2 busy cores and the
		// client gave up waiting. What it tests is the size of a result
		// (the plain run holds it); the race step's concern, sessions
		// sharing counters, the other tests exercise.
		t.Skip("skipped under -race: 33,000 interval records sampled every 10 ms outrun the race detector on 2 cores; the plain run tests them")
	}
	srv := startServer(t, server.Config{})
	c := mustDial(t, client.Config{Addr: srv.addr})
	defer c.Close()
	sp := spec.Default()
	sp.Kind, sp.Parallel, sp.Interval, sp.Duration = spec.TCPStream, 32, 10*time.Millisecond, 10*time.Second
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatalf("%v; the server logged %s", err, srv.logs.waitLog(t, "test done"))
	}
	d := res.Directions[0]
	if n := len(d.Intervals); n < 990 || n > 1000 {
		t.Errorf("%d intervals of the direction, want 1000", n)
	}
	var sum int64
	for _, iv := range d.Intervals {
		sum += iv.Bytes
	}
	// The receiver (the server) measured the intervals; they add up to
	// its window's bytes.
	if sum != d.Summary.Bytes {
		t.Errorf("the server's intervals add up to %d bytes, its window %d", sum, d.Summary.Bytes)
	}
	for _, st := range d.Streams {
		if n := len(st.Receiver.Intervals); n != len(d.Intervals) {
			t.Errorf("stream %d: the server's record has %d intervals, the direction %d", st.ID, n, len(d.Intervals))
		}
	}
	srv.logs.waitLog(t, "test done", "result=ok")
}

// TestClientStopsReading: a client that asks for a test with interval
// reports and never reads its control connection holds the test slot no
// longer than the test's bound (its length plus 20 s), and the test is
// logged as failed, not ok. Before, the sampler wrote each report itself
// with a 10 s deadline and went on sampling a cancelled test when behind:
// a 10 s TCP_BIDIR -P 32 -i 0.01 kept the slot for 1 min 56 s.
func TestClientStopsReading(t *testing.T) {
	srv := startServer(t, server.Config{})
	cc := rawConn(t, srv.addr, "", control.NewHello("raw", ""))
	if _, err := helloBack(t, cc); err != nil {
		t.Fatal(err)
	}
	sp := spec.Default()
	sp.Kind, sp.Parallel, sp.Interval, sp.Duration = spec.TCPBidir, 32, 10*time.Millisecond, 10*time.Second
	var stopSending atomic.Bool
	time.AfterFunc(sp.Duration+2*time.Second, func() { stopSending.Store(true) })
	// A client may say it streams its intervals: then the server keeps
	// none, and queues few.
	cc.Send(control.TypeTest, control.TestRequest{Spec: sp, StreamedIntervals: true})
	var acc control.Accepted
	if err := cc.Expect(control.TypeAccepted, &acc, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, st := range sp.Streams() {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		control.WriteDataHeader(c, acc.Token, st.ID)
		go io.Copy(io.Discard, c)
		if st.Dir == spec.ClientToServer {
			go func() {
				// Send for the test's length, then end the stream as a
				// client does: only the control connection is neglected.
				b := make([]byte, 64<<10)
				for !stopSending.Load() {
					if _, err := c.Write(b); err != nil {
						return
					}
				}
				c.(*net.TCPConn).CloseWrite()
			}()
		}
	}
	if err := cc.Expect(control.TypeReady, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Keep the control connection's receive buffer small, as a client
	// that stops reading leaves it: the server's reports fill it.
	cc.NetConn().(*net.TCPConn).SetReadBuffer(4096)
	started := time.Now()
	cc.Send(control.TypeStart, struct{}{})
	// From here on the control connection is never read.
	line := srv.logs.waitLogWithin(t, sp.Duration+25*time.Second, "test done")
	if el := time.Since(started); el > sp.Duration+20*time.Second {
		t.Errorf("the test ended %v after its start, past its bound of %v", el, sp.Duration+20*time.Second)
	}
	if !strings.Contains(line, "result=failed") || !strings.Contains(line, "stopped reading") {
		t.Errorf("logged as %s; want a failure saying the client stopped reading", line)
	}
	// The slot is free.
	short := spec.Default()
	short.Duration = 200 * time.Millisecond
	c := mustDial(t, client.Config{Addr: srv.addr})
	defer c.Close()
	if _, err := c.Run(context.Background(), short); err != nil {
		t.Errorf("the next test: %v", err)
	}
}
