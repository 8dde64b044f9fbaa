package endpoint

import (
	"fmt"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// udpPair returns two UDP sockets on loopback connected to each other.
func udpPair(t *testing.T) (*net.UDPConn, *net.UDPConn) {
	t.Helper()
	lo := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	a, err := net.ListenUDP("udp", lo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.DialUDP("udp", lo, a.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	aAddr := a.LocalAddr().(*net.UDPAddr)
	a.Close()
	a2, err := net.DialUDP("udp", aAddr, b.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(); a2.Close() })
	return b, a2
}

// TestWindowsOmitAfterData holds each side to its own window. The
// receiver starts first and the sender a known delay later; with a warm-up
// (Omit), the sender's window opens Omit after its start, the receiver's
// Omit after its first datagram, so no earlier than delay+Omit after its
// own start; each lasts Duration within 50 ms; and each side's bytes are
// the paced rate times its own measured window within 1% (a starved
// sender's catching up on its schedule aside), while the warm-up's bytes
// (counted in the totals) stay out.
func TestWindowsOmitAfterData(t *testing.T) {
	testkit.Serial(t)
	const (
		rate  = 40e6
		delay = 200 * time.Millisecond
	)
	sp := spec.Default()
	sp.Kind = spec.UDPStream
	sp.SendSize = spec.DefaultUDPSize
	sp.RateBitsPerSecond = rate
	sp.Omit = 300 * time.Millisecond
	sp.Duration = time.Second
	sp.Interval = 0
	sp.CPU = true
	testkit.RetryRate(t, 3, func(int) testkit.RateAttempt {
		a, b := udpPair(t)
		snd, rcv := sendAndReceive(t, sp, a, b, delay)
		sf, rf := snd.Flows[0], rcv.Flows[0]
		if sf.Role != result.Sender || rf.Role != result.Receiver {
			t.Fatalf("roles %s/%s", sf.Role, rf.Role)
		}
		var starved string
		if c := snd.CPU; c != nil {
			starved = testkit.CPUStarved(c.UtilPct, c.BusiestCPUPct, c.StealPct, c.OtherProcessesUtilPct)
		}
		var problems []string
		problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
		omit := sp.Omit.Seconds()
		if sf.StartOffsetS < omit || sf.StartOffsetS > omit+0.05 {
			problem("sender's window opened %.4f s after its start, want %v (within 50 ms)", sf.StartOffsetS, sp.Omit)
		}
		if min := (delay + sp.Omit).Seconds(); rf.StartOffsetS < min {
			problem("receiver's window opened %.4f s after its start, before its first datagram (%v) plus the omit (%v)", rf.StartOffsetS, delay, sp.Omit)
		}
		// The pacer keeps to a schedule from the sender's start: a sender
		// starved before its window opened catches up inside it. Its debt
		// then is what the schedule allowed by then less what it had sent;
		// the window may hold that much more than the rate, on either side.
		debt := max(0, rate/8*sf.StartOffsetS-float64(sf.Streams[0].TotalBytes-sf.Bytes))
		var got float64 = math.MaxFloat64
		var detail string
		for _, f := range []result.Flow{sf, rf} {
			if math.Abs(f.ElapsedS-sp.Duration.Seconds()) > 0.05 {
				problem("%s window %.4f s, asked %v (more than 50 ms off)", f.Role, f.ElapsedS, sp.Duration)
			}
			want := rate / 8 * f.ElapsedS
			if float64(f.Bytes) > 1.01*want+debt {
				problem("%s counted %d bytes in its %.4f s window, more than 1%% above the rate's %.0f (plus the sender's %.0f bytes behind schedule): bytes from outside the window", f.Role, f.Bytes, f.ElapsedS, want, debt)
			}
			// The warm-up's datagrams are in the totals, not the window.
			if total := f.Streams[0].TotalBytes; float64(total-f.Bytes) < 0.9*rate/8*omit {
				problem("%s: %d bytes in all, %d in the window: the warm-up's %.0f are missing from outside it", f.Role, total, f.Bytes, rate/8*omit)
			}
			got = min(got, 8*float64(f.Bytes)/f.ElapsedS)
			detail += fmt.Sprintf("%s %d bytes in %.4f s from %.4f s; ", f.Role, f.Bytes, f.ElapsedS, f.StartOffsetS)
		}
		detail += fmt.Sprintf("sender behind schedule by %.0f bytes at its window's start", debt)
		// A window off its place or length is a failure, unless the
		// sender's CPU figures show it was starved: then the attempt
		// counts as a starved shortfall, tried again (and in the end
		// skipped, saying so, or failed under WIRESPEED_SERIAL=strict).
		if len(problems) > 0 {
			if starved == "" {
				for _, p := range problems {
					t.Error(p)
				}
			} else {
				detail += "; " + strings.Join(problems, "; ")
				got = 0
			}
		}
		return testkit.RateAttempt{Got: got, Want: rate, Tol: 0.01, Starved: starved, Detail: detail}
	})
}
