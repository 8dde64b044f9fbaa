package endpoint

import (
	"context"
	"fmt"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/engine"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// lateWindow is the first of the results' warnings that a window was
// run late by a busy host, or "".
func lateWindow(rs ...result.SideResult) string {
	for _, r := range rs {
		for _, w := range r.Warnings {
			if strings.Contains(w, "the CPUs were too busy to run it on time") {
				return w
			}
		}
	}
	return ""
}

func pair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	return testkit.TCPPair(t)
}

// sendAndReceive runs one client-to-server flow of sp: a receiver (the
// remote side) on b, started first, and after delay a sender (the local
// side) on a; it gives both sides' results.
func sendAndReceive(t *testing.T, sp spec.Test, a, b net.Conn, delay time.Duration) (snd, rcv result.SideResult) {
	t.Helper()
	rcvDone := make(chan result.SideResult, 1)
	go func() {
		r, err := Run(context.Background(), Config{Spec: sp, Side: result.Remote, Sends: spec.ServerToClient,
			Conns: []Conn{{ID: 1, Dir: spec.ClientToServer, Conn: b}}})
		if err != nil {
			t.Error(err)
		}
		rcvDone <- r
	}()
	time.Sleep(delay)
	snd, err := Run(context.Background(), Config{Spec: sp, Side: result.Local, Sends: spec.ClientToServer,
		Conns: []Conn{{ID: 1, Dir: spec.ClientToServer, Conn: a}}})
	rcv = <-rcvDone
	if err != nil {
		t.Fatal(err)
	}
	return snd, rcv
}

// TestReceiverAnchorsOnFirstByte: a receiver that starts before its sender
// opens its window at the first byte, so both windows have the asked
// length and cover the same data.
func TestReceiverAnchorsOnFirstByte(t *testing.T) {
	a, b := pair(t)
	sp := spec.Default()
	sp.Duration = 400 * time.Millisecond
	sp.Interval = 100 * time.Millisecond
	sp.SendSize = 16 << 10

	const delay = 300 * time.Millisecond
	snd, rcv := sendAndReceive(t, sp, a, b, delay)
	rf, sf := rcv.Flows[0], snd.Flows[0]
	if rf.Role != result.Receiver || sf.Role != result.Sender {
		t.Fatalf("roles %s/%s", rf.Role, sf.Role)
	}
	if rf.StartOffsetS < delay.Seconds()-0.01 {
		t.Errorf("receiver window opened %.3fs after its start, want after the first byte (%v)", rf.StartOffsetS, delay)
	}
	for _, f := range []result.Flow{rf, sf} {
		if math.Abs(f.ElapsedS-sp.Duration.Seconds()) > 0.05 {
			// A window its sampler ran late says so (shortWindow): the
			// machine's, not the schedule's, unless nothing says so.
			if why := lateWindow(rcv, snd); why != "" {
				testkit.SkipStarved(t, fmt.Sprintf("%s window %.3fs, want %v: %s", f.Role, f.ElapsedS, sp.Duration, why))
			}
			t.Errorf("%s window %.3fs, want %v", f.Role, f.ElapsedS, sp.Duration)
		}
		if len(f.Intervals) != 4 {
			t.Errorf("%s has %d intervals, want 4", f.Role, len(f.Intervals))
		}
		if f.Truncated {
			t.Errorf("%s window truncated", f.Role)
		}
	}
	if s, r := sf.Streams[0], rf.Streams[0]; s.TotalBytes != r.TotalBytes || !r.Complete {
		t.Errorf("sender total %d, receiver total %d (complete %v)", s.TotalBytes, r.TotalBytes, r.Complete)
	}
}

// TestReceiverLateAfterTheData: a receiver whose sampler opens the window
// only after the sender's whole stream has arrived (here held back until
// its loop saw the end of stream; under load, a busy host) measured
// nothing in its window. It reports the whole stream instead, counted and
// timed by its loop, and says so; before, it reported 0 bytes in 0 s (and
// UDP every datagram lost).
func TestReceiverLateAfterTheData(t *testing.T) {
	testHookWindowOpening = func(f *flow) {
		if f.role != result.Receiver {
			return
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if f.loops[0].(engine.Follower).Ended() {
				return
			}
		}
		t.Error("the receiver's loop never saw the end of stream")
	}
	t.Cleanup(func() { testHookWindowOpening = nil })
	for _, kind := range []spec.Kind{spec.TCPStream, spec.UDPStream} {
		t.Run(string(kind), func(t *testing.T) {
			sp := spec.Default()
			sp.Kind, sp.Duration = kind, 300*time.Millisecond
			var a, b net.Conn
			if kind == spec.UDPStream {
				a, b = udpPair(t)
				sp.SendSize, sp.RateBitsPerSecond = 1400, 100e6
			} else {
				a, b = pair(t)
				sp.SendSize = 16 << 10
			}
			snd, rcv := sendAndReceive(t, sp, a, b, 0)
			rf, sf := rcv.Flows[0], snd.Flows[0]
			if sf.Streams[0].TotalBytes == 0 {
				t.Fatal("the sender sent nothing")
			}
			// What the receiver's loop read, first byte to end.
			if got := rf.Streams[0].TotalBytes; rf.Bytes != got {
				t.Errorf("receiver counted %d bytes, its loop read %d", rf.Bytes, got)
			}
			if kind == spec.TCPStream && rf.Bytes != sf.Streams[0].TotalBytes {
				t.Errorf("receiver counted %d bytes, the sender wrote %d", rf.Bytes, sf.Streams[0].TotalBytes)
			}
			// From its first byte to the sender's end, about the sender's 0.3 s.
			if rf.ElapsedS < 0.2 || rf.ElapsedS > 0.2+sf.ElapsedS {
				t.Errorf("receiver's window %.3f s, the sender's %.3f s", rf.ElapsedS, sf.ElapsedS)
			}
			if why := lateWindow(rcv); !strings.Contains(why, "after the end of stream; the figure is the whole stream") {
				t.Errorf("receiver's warning %q", why)
			}
			if kind != spec.UDPStream {
				return
			}
			// The datagrams: every one the sender numbered, those that
			// arrived as the receiver's loop counted them.
			u := result.Join(sp, snd, rcv).Summary.UDPSummary
			if u == nil || u.PacketsSent != sf.Streams[0].TotalPackets || u.PacketsReceived != rf.Streams[0].TotalPackets {
				t.Errorf("datagrams %+v; the sender sent %d, the receiver's loop took %d", u, sf.Streams[0].TotalPackets, rf.Streams[0].TotalPackets)
			}
		})
	}
}

// TestReceiverWithoutData: a receiver whose sender never sends gives up
// after the planned end plus the grace, with an empty, truncated window
// as long as the schedule gave it (TestReceiverWithNoDataReportsScheduleWindow
// checks the figures over it).
func TestReceiverWithoutData(t *testing.T) {
	a, b := pair(t)
	defer a.Close()
	sp := spec.Default()
	sp.Duration = 100 * time.Millisecond
	start := time.Now()
	r, err := Run(context.Background(), Config{Spec: sp, Side: result.Remote, Sends: spec.ServerToClient,
		Conns: []Conn{{ID: 1, Dir: spec.ClientToServer, Conn: b}}, FirstByteGrace: 200 * time.Millisecond, DrainTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	f := r.Flows[0]
	if !f.Truncated || f.Bytes != 0 || math.Abs(f.ElapsedS-sp.Duration.Seconds()) > 0.05 {
		t.Errorf("flow %+v, want an empty truncated window", f)
	}
}

// TestCancel: cancelling ends both roles promptly with what was measured.
func TestCancel(t *testing.T) {
	a, b := pair(t)
	sp := spec.Default()
	sp.Duration = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	rcvDone := make(chan result.SideResult, 1)
	go func() {
		r, _ := Run(ctx, Config{Spec: sp, Side: result.Remote, Sends: spec.ServerToClient, Conns: []Conn{{ID: 1, Dir: spec.ClientToServer, Conn: b}}})
		rcvDone <- r
	}()
	start := time.Now()
	snd, err := Run(ctx, Config{Spec: sp, Side: result.Local, Sends: spec.ClientToServer, Conns: []Conn{{ID: 1, Dir: spec.ClientToServer, Conn: a}}})
	if err != nil {
		t.Fatal(err)
	}
	rcv := <-rcvDone
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancelled run took %v", d)
	}
	for _, r := range []result.SideResult{snd, rcv} {
		f := r.Flows[0]
		if !r.Interrupted || !f.Truncated || f.Bytes == 0 || f.ElapsedS > 1 {
			t.Errorf("%s: interrupted %v truncated %v bytes %d elapsed %.2f", f.Role, r.Interrupted, f.Truncated, f.Bytes, f.ElapsedS)
		}
	}
}

// TestShortWindow: a window under nine tenths of the plan is reported,
// with why: opened late (its sampler starved), or closed early at the
// sender's end; a full one, or one a hair short, is not.
func TestShortWindow(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name           string
		measured, late time.Duration
		truncated      bool
		want           string
	}{
		{"full", 600 * ms, 2 * ms, false, ""},
		{"a hair short", 545 * ms, 5 * ms, true, ""},
		{"opened after the sender stopped", 0, 937 * ms, true, "client_to_server receiver: window 0.00 s of 0.60 s (opened 937 ms late, closed 337 ms late): the CPUs were too busy to run it on time"},
		{"opened late", 320 * ms, 280 * ms, false, "client_to_server receiver: window 0.32 s of 0.60 s (opened 280 ms late): the CPUs were too busy to run it on time"},
		{"closed late", 887 * ms, 0, false, "client_to_server receiver: window 0.89 s of 0.60 s (closed 287 ms late): the CPUs were too busy to run it on time"},
		{"cut at the sender's end", 300 * ms, 1 * ms, true, "client_to_server receiver: window 0.30 s of 0.60 s (closed 299 ms early, at the sender's end of stream, its first byte having come late): the CPUs were too busy to run it on time"},
		{"both a little", 530 * ms, 50 * ms, false, "client_to_server receiver: window 0.53 s of 0.60 s (opened 50 ms late, closed 20 ms early): the CPUs were too busy to run it on time"},
	}
	for _, tt := range tests {
		got := shortWindow(spec.ClientToServer, result.Receiver, 600*ms, tt.measured, tt.late, tt.truncated)
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
