package client_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/measure"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// TestAmount: -n and -k move exactly the amount asked for in each
// direction, counted by the receiver and, for TCP, by the receiving
// socket's kernel (TCP_INFO bytes_received, read after the end of
// stream), and end long before the length; UDP_STREAM sends
// ceil(amount/size) whole datagrams.
func TestAmount(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	const mib = 1 << 20
	tests := []struct {
		name      string
		kind      spec.Kind
		reverse   bool
		parallel  int
		bytes     int64
		blocks    int64
		size      int
		rate      float64
		wantBytes int64 // what each direction's receiver gets
	}{
		{name: "TCP_STREAM -n 100M", kind: spec.TCPStream, bytes: 100 * mib, wantBytes: 100 * mib},
		{name: "TCP_MAERTS -n 100M", kind: spec.TCPMaerts, bytes: 100 * mib, wantBytes: 100 * mib},
		{name: "TCP_STREAM -P 3 uneven", kind: spec.TCPStream, parallel: 3, bytes: 100*mib + 1, wantBytes: 100*mib + 1},
		{name: "TCP_BIDIR -n 20M", kind: spec.TCPBidir, parallel: 2, bytes: 20 * mib, wantBytes: 20 * mib},
		{name: "TCP_STREAM -k 1000 -m 64K", kind: spec.TCPStream, blocks: 1000, size: 64 << 10, wantBytes: 1000 * 65536},
		// ceil(10 MiB / 1472) = 7124 datagrams.
		{name: "UDP_STREAM -n 10M", kind: spec.UDPStream, bytes: 10 * mib, size: 1472, rate: 200e6, wantBytes: 7124 * 1472},
		{name: "UDP_STREAM -R -n 10M", kind: spec.UDPStream, reverse: true, bytes: 10 * mib, size: 1472, rate: 200e6, wantBytes: 7124 * 1472},
		{name: "UDP_STREAM -k 1000", kind: spec.UDPStream, blocks: 1000, size: 1000, rate: 200e6, wantBytes: 1000 * 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := spec.Default()
			sp.Kind, sp.Reverse = tt.kind, tt.reverse
			sp.Parallel = max(tt.parallel, 1)
			sp.AmountBytes, sp.AmountBlocks = tt.bytes, tt.blocks
			if tt.size > 0 {
				sp.SendSize = tt.size
			}
			sp.RateBitsPerSecond = tt.rate
			sp.Duration = 20 * time.Second
			sp.Interval = 200 * time.Millisecond
			sp.CPU = false
			start := time.Now()
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the run took %v: it did not end when the amount was moved (-l %v)", took, sp.Duration)
			}
			if len(res.Directions) != len(sp.Directions()) {
				t.Fatalf("%d directions", len(res.Directions))
			}
			for _, d := range res.Directions {
				if why := udpDroppedAtReceiver(res, d, tt.wantBytes); why != "" {
					testkit.SkipStarved(t, why)
				}
				checkAmountDirection(t, sp, d, tt.wantBytes)
			}
			for _, w := range report.WarningTexts(res.Warnings) {
				if strings.Contains(w, "amount") {
					t.Errorf("warning: %s", w)
				}
			}
		})
	}
}

// udpDroppedAtReceiver says why a UDP direction's receiver got fewer
// datagrams than were sent when the host's kernel dropped at least the
// missing ones at a full socket buffer (Udp RcvbufErrors): on loopback
// no datagram is lost on the wire, so only a receiver that did not run
// for milliseconds at a time (a host busy with other work) loses them.
// Both sides of this test share one host, and the drops can fall outside
// the receiver's window (its first samples, its last), so the larger of
// the two sides' counts is the host's. It is "" for any other shortfall,
// which fails.
func udpDroppedAtReceiver(res result.Result, d result.DirectionResult, want int64) string {
	u := d.Summary.UDPSummary
	if u == nil || d.Summary.Bytes >= want {
		return ""
	}
	var dropped int64
	for _, c := range []*measure.Counters{res.Local.Counters, res.Remote.Counters} {
		if c != nil {
			dropped = max(dropped, c.UDP.RcvbufErrors)
		}
	}
	if missing := u.PacketsSent - u.PacketsReceived; missing > 0 && dropped >= missing {
		return fmt.Sprintf("%s: %d of %d datagrams missing, and the host's kernel dropped %d at a full socket buffer (Udp RcvbufErrors)",
			d.Direction, missing, u.PacketsSent, dropped)
	}
	return ""
}

func checkAmountDirection(t *testing.T, sp spec.Test, d result.DirectionResult, want int64) {
	t.Helper()
	s := d.Summary
	if d.Amount == nil || !d.Amount.Reached || d.Amount.Bytes != sp.Amount() {
		t.Errorf("%s: amount %+v, want %d reached", d.Direction, d.Amount, sp.Amount())
	}
	if s.Bytes != want || s.SenderBytes != want {
		t.Errorf("%s: receiver counted %d bytes in its window, sender %d; want %d", d.Direction, s.Bytes, s.SenderBytes, want)
	}
	if s.ElapsedS <= 0 || s.ElapsedS > sp.Duration.Seconds()/2 {
		t.Errorf("%s: elapsed %.3f s for the amount, with -l %v", d.Direction, s.ElapsedS, sp.Duration)
	}
	if got, wantBPS := s.BitsPerSecond, 8*float64(want)/s.ElapsedS; got < 0.999*wantBPS || got > 1.001*wantBPS {
		t.Errorf("%s: throughput %.6g, want the amount over the elapsed time, %.6g", d.Direction, got, wantBPS)
	}
	var rcvTotal, rcvKernel, sndDatagrams int64
	for _, st := range d.Streams {
		rcvTotal += st.Receiver.TotalBytes
		sndDatagrams += st.Sender.TotalPackets
		if !sp.Kind.UDP() && runtime.GOOS == "linux" {
			if st.Receiver.TCPInfo == nil {
				t.Fatalf("%s stream %d: no TCP_INFO from the receiver", d.Direction, st.ID)
			}
			// The kernel counts the FIN's sequence number too, and on the
			// server the data connection's header.
			rcvKernel += st.Receiver.TCPInfo.BytesReceived - 1
			if d.Direction == spec.ClientToServer {
				rcvKernel -= control.DataHeaderLen
			}
		}
	}
	if rcvTotal != want {
		t.Errorf("%s: receivers' totals %d, want %d", d.Direction, rcvTotal, want)
	}
	if !sp.Kind.UDP() && runtime.GOOS == "linux" && rcvKernel != want {
		t.Errorf("%s: the receiving sockets' kernel counted %d bytes (TCP_INFO bytes_received), want %d", d.Direction, rcvKernel, want)
	}
	if sp.Kind.UDP() {
		if wantN := want / int64(sp.SendSize); sndDatagrams != wantN || s.UDPSummary == nil || s.UDPSummary.PacketsSent != wantN {
			t.Errorf("%s: %d datagrams sent (summary %+v), want %d", d.Direction, sndDatagrams, s.UDPSummary, wantN)
		}
	}
	if n := len(d.Intervals); n == 0 || n > int(s.ElapsedS/sp.Interval.Seconds())+2 {
		t.Errorf("%s: %d intervals over %.3f s of %v", d.Direction, n, s.ElapsedS, sp.Interval)
	}
}

// TestAmountNotReached: an amount the length cannot hold ends at the
// length, with the amount marked not reached and a warning that says how
// far it got.
func TestAmountNotReached(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	sp := spec.Default()
	sp.AmountBytes = 1 << 30
	sp.RateBitsPerSecond = 50e6 // 1 GiB would take 170 s
	sp.Duration = time.Second
	sp.CPU = false
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Directions[0]
	if d.Amount == nil || d.Amount.Reached {
		t.Errorf("amount %+v, want not reached", d.Amount)
	}
	if e := d.Summary.ElapsedS; e < 0.9 || e > 1.2 {
		t.Errorf("elapsed %.3f s, want the length of 1 s", e)
	}
	found := false
	for _, w := range report.WarningTexts(res.Warnings) {
		found = found || strings.Contains(w, "was not reached") && strings.Contains(w, "-l 1s")
	}
	if !found {
		t.Errorf("no warning about the amount not reached in %q", report.WarningTexts(res.Warnings))
	}
}

// TestTCPPaced: -b on the TCP stream tests holds the rate at the receiver
// within 2% over 3 s, client and server sending.
func TestTCPPaced(t *testing.T) {
	testkit.Serial(t)
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	for _, kind := range []spec.Kind{spec.TCPStream, spec.TCPMaerts} {
		t.Run(string(kind), func(t *testing.T) {
			sp := spec.Default()
			sp.Kind = kind
			sp.RateBitsPerSecond = 200e6
			sp.Duration = 3 * time.Second
			sp.CPU = true
			testkit.RetryRate(t, 3, func(int) testkit.RateAttempt {
				res, err := c.Run(context.Background(), sp)
				if err != nil {
					t.Fatal(err)
				}
				return rateAttempt(res, sp.RateBitsPerSecond, 0.02, kind == spec.TCPMaerts)
			})
		})
	}
}
