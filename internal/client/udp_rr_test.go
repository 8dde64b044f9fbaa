package client_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// rateAttempt is a paced stream run's rates (-b, UDP or TCP) against the
// asked one: the sender's and the receiver's of its first direction,
// whichever is further out (above first), with the sender's CPU evidence:
// the local side's, the remote side's if reverse (the server sends).
func rateAttempt(res result.Result, want, tol float64, reverse bool) testkit.RateAttempt {
	d := res.Directions[0]
	snd, rcv := d.Summary.SenderBitsPerSecond, d.Summary.BitsPerSecond
	got := min(snd, rcv)
	if max(snd, rcv) > want*(1+tol) {
		got = max(snd, rcv)
	}
	c := res.Summary.LocalCPU
	if reverse {
		c = res.Summary.RemoteCPU
	}
	var starved string
	if c != nil {
		starved = testkit.CPUStarved(c.UtilPct, c.BusiestCPUPct, c.StealPct, c.OtherProcessesUtilPct)
	}
	return testkit.RateAttempt{Got: got, Want: want, Tol: tol, Starved: starved,
		Detail: fmt.Sprintf("sender %.6g bit/s, receiver %.6g bit/s", snd, rcv)}
}

func TestUDPStream(t *testing.T) {
	testkit.Serial(t)
	addr, _ := startServer(t, server.Config{})
	tests := []struct {
		name     string
		reverse  bool
		parallel int
		rate     float64
	}{
		{name: "client sends", rate: 100e6, parallel: 1},
		{name: "server sends", rate: 100e6, parallel: 1, reverse: true},
		{name: "two streams", rate: 50e6, parallel: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			sp := spec.Default()
			sp.Kind = spec.UDPStream
			sp.SendSize = spec.DefaultUDPSize
			sp.RateBitsPerSecond = tt.rate
			sp.Reverse = tt.reverse
			sp.Parallel = tt.parallel
			sp.Duration = time.Second
			sp.Interval = 250 * time.Millisecond
			// The pacing holds the asked rate, and the receiver sees it, when
			// the sender gets the CPU it needs. On a shared 2-core machine
			// another test binary may starve it, so a run that falls short
			// while the sender's CPU figures show it is tried again, up to
			// three times in all; a run above the rate is not.
			sp.CPU = true
			var res result.Result
			testkit.RetryRate(t, 3, func(int) testkit.RateAttempt {
				var err error
				if res, err = c.Run(context.Background(), sp); err != nil {
					t.Fatal(err)
				}
				return rateAttempt(res, tt.rate*float64(tt.parallel), 0.02, tt.reverse)
			})
			// Run alone (testkit.Serial), each window is as long as asked.
			if s := res.Directions[0].Summary; math.Abs(s.ElapsedS-sp.Duration.Seconds()) > 0.05 || math.Abs(s.SenderElapsedS-sp.Duration.Seconds()) > 0.05 {
				t.Errorf("receiver's window %.4f s, sender's %.4f s, asked %v: more than 50 ms off", s.ElapsedS, s.SenderElapsedS, sp.Duration)
			}
			if len(report.WarningTexts(res.Warnings)) > 0 {
				t.Errorf("warnings: %v", report.WarningTexts(res.Warnings))
			}
			d := res.Directions[0]
			if want := spec.ClientToServer; tt.reverse {
				want = spec.ServerToClient
				if d.Direction != want {
					t.Errorf("direction %s, want %s", d.Direction, want)
				}
			}
			u := d.Summary.UDPSummary
			if u == nil {
				t.Fatal("no UDP summary")
			}
			// At a modest rate on loopback nothing is lost.
			if u.Lost != 0 || u.PacketsReceived != u.PacketsSent || u.PacketsSent == 0 {
				t.Errorf("sent %d, received %d, lost %d: want no loss", u.PacketsSent, u.PacketsReceived, u.Lost)
			}
			if u.OutOfOrder != 0 || u.Duplicates != 0 {
				t.Errorf("out of order %d, duplicates %d", u.OutOfOrder, u.Duplicates)
			}
			// Both sides counted the same datagrams and bytes over the run.
			for _, st := range d.Streams {
				if st.Sender.TotalPackets != st.Receiver.TotalPackets {
					t.Errorf("stream %d: sender sent %d datagrams in all, receiver got %d", st.ID, st.Sender.TotalPackets, st.Receiver.TotalPackets)
				}
				if st.Receiver.TotalBytes != st.Receiver.TotalPackets*int64(sp.SendSize) {
					t.Errorf("stream %d: %d bytes for %d datagrams of %d", st.ID, st.Receiver.TotalBytes, st.Receiver.TotalPackets, sp.SendSize)
				}
				if !st.Receiver.Complete {
					t.Errorf("stream %d: receiver never saw the end of stream", st.ID)
				}
			}
			if len(d.Intervals) != 4 {
				t.Errorf("%d intervals, want 4", len(d.Intervals))
			}
			if res.Remote.Counters == nil || res.Local.Counters == nil {
				t.Error("no kernel counters")
			}
		})
	}
}

// TestUDPFlood: as fast as possible, the receiver may not keep up; the
// accounting must still add up.
func TestUDPFlood(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	sp := spec.Default()
	sp.Kind = spec.UDPStream
	sp.SendSize = 64
	sp.Duration = 500 * time.Millisecond
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	u := res.Summary.UDPSummary
	if u.PacketsSent == 0 || u.PacketsReceived == 0 || u.Lost != u.PacketsSent-u.PacketsReceived || u.Lost < 0 {
		t.Errorf("sent %d received %d lost %d", u.PacketsSent, u.PacketsReceived, u.Lost)
	}
	if want := 100 * float64(u.Lost) / float64(u.PacketsSent); math.Abs(u.LossPct-want) > 1e-9 {
		t.Errorf("loss %g%%, want %g%%", u.LossPct, want)
	}
	t.Logf("64-byte flood on loopback: %d sent, %d received, %.1f%% lost, %d send errors", u.PacketsSent, u.PacketsReceived, u.LossPct, u.SendErrors)
}

func TestRequestResponse(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	tests := []struct {
		kind             spec.Kind
		req, resp, burst int
		parallel         int
	}{
		{kind: spec.TCPRR, req: 1, resp: 1, burst: 1, parallel: 1},
		{kind: spec.TCPRR, req: 64, resp: 1000, burst: 4, parallel: 2},
		{kind: spec.UDPRR, req: 1, resp: 1, burst: 1, parallel: 1},
		{kind: spec.UDPRR, req: 100, resp: 32, burst: 3, parallel: 2},
		// Asymmetric sizes both ways (issue 32: a request larger than a
		// response under 8 bytes completed one transaction, then timed
		// out: the response echoed the request's first byte, not the
		// sequence number's last).
		{kind: spec.UDPRR, req: 100, resp: 1, burst: 1, parallel: 1},
		{kind: spec.UDPRR, req: 8000, resp: 1, burst: 2, parallel: 1},
		{kind: spec.UDPRR, req: 1, resp: 100, burst: 1, parallel: 1},
		{kind: spec.UDPRR, req: 7, resp: 3, burst: 4, parallel: 1},
		{kind: spec.TCPRR, req: 100, resp: 1, burst: 1, parallel: 1},
		{kind: spec.TCPRR, req: 1, resp: 100, burst: 1, parallel: 1},
		{kind: spec.TCPCRR, req: 1, resp: 1, burst: 1, parallel: 1},
		{kind: spec.TCPCRR, req: 200, resp: 3000, burst: 1, parallel: 2},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			sp := spec.Default()
			sp.Kind = tt.kind
			sp.RequestSize, sp.ResponseSize, sp.Burst, sp.Parallel = tt.req, tt.resp, tt.burst, tt.parallel
			sp.Duration = 500 * time.Millisecond
			sp.Interval = 250 * time.Millisecond
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			if w := starvedWindow(report.WarningTexts(res.Warnings)); w != "" {
				// The machine was too busy to keep the window: its
				// figures are of the load (checkResult does the same).
				testkit.SkipStarved(t, w)
				return
			}
			if len(report.WarningTexts(res.Warnings)) > 0 {
				t.Errorf("warnings: %v", report.WarningTexts(res.Warnings))
			}
			rr := res.Summary.RRSummary
			if rr == nil || rr.Transactions == 0 {
				t.Fatalf("no transactions: %+v", res.Summary)
			}
			// On loopback nothing is lost: a timeout is a response the
			// client could not match to its request.
			if rr.Timeouts > 0 || rr.Transactions < 20 {
				t.Errorf("-r %d,%d: %d transactions, %d timeouts", tt.req, tt.resp, rr.Transactions, rr.Timeouts)
			}
			if want := float64(rr.Transactions) / res.Summary.ElapsedS; math.Abs(rr.TransactionsPerSecond-want) > 1e-9*want {
				t.Errorf("%g transactions/s, want transactions/elapsed = %g", rr.TransactionsPerSecond, want)
			}
			// Every request the client completed, the server answered;
			// the server may have answered more by what was in flight
			// when the client's window closed: at most burst requests a
			// connection (CI saw 55,404 answered against 55,402
			// completed with burst 4 on 2 connections).
			maxInFlight := int64(tt.burst * tt.parallel)
			if tt.kind == spec.TCPCRR {
				maxInFlight = 0 // one transaction a connection, closed before it counts
			}
			if extra := rr.ServerTransactions - rr.ClientTransactions; rr.Timeouts == 0 && tt.kind != spec.UDPRR && (extra < 0 || extra > maxInFlight) {
				t.Errorf("client completed %d transactions, server answered %d: more than the %d in flight at the end", rr.ClientTransactions, rr.ServerTransactions, maxInFlight)
			}
			if rr.ServerTransactions < rr.ClientTransactions {
				t.Errorf("server answered %d, fewer than the client's %d", rr.ServerTransactions, rr.ClientTransactions)
			}
			l := rr.Latency
			if !(0 < l.Min && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
				t.Errorf("latency percentiles out of order: %+v", l)
			}
			// Little's law: with at most N = parallel x burst transactions
			// in flight, the mean time of one is at most N over the rate,
			// and equal to it when the loop never pauses between a
			// response and the next request. It does pause: a burst's
			// requests wait to be sent behind each other, TCP_CRR's
			// latency ends before the close, and a loaded machine
			// deschedules the loop (an idle one holds TCP_RR and UDP_RR
			// 1/1 within 5%; under load 15 on 2 cores they came 5-25%
			// under). So: never above N/rate by more than 5%, and for one
			// in flight not under half of it. A latency or a rate off by a
			// unit, or by the burst, fails here.
			inFlight := float64(tt.parallel * tt.burst)
			little := inFlight / rr.TransactionsPerSecond * 1e6
			switch {
			case tt.burst == 1 && tt.kind != spec.TCPCRR && l.Mean < little/2:
				t.Errorf("mean latency %.2f us; Little's law gives %g in flight / %.0f per s = %.2f us (under half of it)", l.Mean, inFlight, rr.TransactionsPerSecond, little)
			case l.Mean > 1.05*little || l.Mean < little/(2*inFlight):
				t.Errorf("mean latency %.2f us; Little's law allows at most %g in flight / %.0f per s = %.2f us, and not under 1/%g of it", l.Mean, inFlight, rr.TransactionsPerSecond, little, 2*inFlight)
			}
			if math.Abs(float64(l.Count-rr.Transactions)) > 0.05*float64(rr.Transactions)+5 {
				t.Errorf("latency histogram has %d values for %d transactions", l.Count, rr.Transactions)
			}
			if wantBytes := rr.Transactions * int64(tt.req+tt.resp); res.Summary.Bytes != wantBytes {
				t.Errorf("%d bytes for %d transactions of %d+%d", res.Summary.Bytes, rr.Transactions, tt.req, tt.resp)
			}
			if len(res.Intervals) != 2 || res.Intervals[0].TransactionsPerSecond <= 0 {
				t.Errorf("intervals %+v", res.Intervals)
			}
			for _, st := range res.Streams {
				if st.Sender.Role != result.Requester || st.Receiver.Role != result.Responder || st.Summary.RRSummary == nil {
					t.Errorf("stream %d: roles %s/%s", st.ID, st.Sender.Role, st.Receiver.Role)
				}
			}
		})
	}
}
