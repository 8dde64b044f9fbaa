package limit

import (
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestDiagnoseThresholds puts each rule's figure exactly at its threshold
// and just short of it (docs/limits.md: "at least" each percentage): a
// rule whose >= became > fails at the threshold, one that moved the
// other way fails just short of it. The figures are chosen so that the
// percentages come out exact in floating point (worked out in each
// comment).
func TestDiagnoseThresholds(t *testing.T) {
	udpCap := func(goodput float64) *result.Result {
		r := streamResult(spec.UDPStream, goodput)
		r.Spec.RateBitsPerSecond = 10e6
		return r
	}
	cpuBound := func(thread float64) *result.Result {
		// Thread time plus wait plus its CPU's softirq (0 here).
		return withCPU(streamResult(spec.TCPStream, 5e9), cpuFig(100, 0, 95, 60, 0, thread, 0), idle(200))
	}
	starved := func(wait, others float64) *result.Result {
		// 40% running, wait% runnable, 5% softirq: not bound.
		return withCPU(streamResult(spec.TCPStream, 2e9),
			cpuFig(100, 1, 100, 20, 5, 40, wait, measure.TaskCPU{ID: 300, Name: "busyloop", UtilPct: others, LastCPU: 1}), idle(200))
	}
	rwnd := func(pct float64) *result.Result {
		r := withTCP(streamResult(spec.TCPStream, 1e9), 100, pct, 0, 0)
		r.Spec.RemoteSockBuf = 65536 // the user fixed the receiver's buffer
		return r
	}
	unfixed := func(pct float64) *result.Result { return withTCP(streamResult(spec.TCPStream, 1e9), 100, pct, 0, 0) }
	// 1 Gbit/s is 125,000,000 bytes/s: at an RTT of 1 ms, 125,000 bytes
	// in flight, 40% of a 312,500-byte receive buffer.
	inFlight := func(rcvbuf int) *result.Result {
		r := rwnd(10)
		st := &r.Directions[0].Streams[0]
		st.Sender.TCPInfo.RTTMicros = 1000
		st.Receiver.RcvBufEnd = rcvbuf
		return r
	}
	tcpCap := func(goodput float64) *result.Result {
		r := streamResult(spec.TCPStream, goodput)
		r.Spec.RateBitsPerSecond = 200e6
		return r
	}
	// 579.2 Mbit/s for 2 s is 144,800,000 bytes: 100,000 segments of
	// 1448, of which 1000 retransmitted are 1%.
	retrans := func(n int64) *result.Result { return withTCP(streamResult(spec.TCPStream, 579.2e6), 100, 0, 0, n) }
	udpLoss := func(pct float64) *result.Result {
		r := streamResult(spec.UDPStream, 1e6)
		r.Directions[0].Summary.UDPSummary = &result.UDPSummary{PacketsSent: 10000, PacketsReceived: 10000 - int64(pct*100), Lost: int64(pct * 100), LossPct: pct}
		return r
	}
	tests := []struct {
		name string
		res  *result.Result
		want result.LimitKind
		note string // in the notes
	}{
		// -b 10M: 9 Mbit/s is 90.000% of it.
		{name: "rate at 90%", res: udpCap(9e6), want: result.LimitRateCap},
		{name: "rate at 89.9%", res: udpCap(8.99e6), want: result.LimitUnknown},
		// 10.5 Mbit/s is 105.000%: still the cap; above it was not.
		{name: "rate at 105%", res: udpCap(10.5e6), want: result.LimitRateCap},
		{name: "rate at 105.1%", res: udpCap(10.51e6), want: result.LimitUnknown, note: "that rate was not in force"},
		{name: "cpu at 90%", res: cpuBound(90), want: result.LimitSenderCPU},
		{name: "cpu at 89.9%", res: cpuBound(89.9), want: result.LimitUnknown},
		{name: "waited 25%, others 20%", res: starved(25, 20), want: result.LimitOtherProcesses},
		{name: "waited 24.9%", res: starved(24.9, 20), want: result.LimitUnknown},
		{name: "others 19.9%", res: starved(25, 19.9), want: result.LimitUnknown},
		// withTCP's percentages of the 2 s window: 50% is 1,000,000 us.
		{name: "sndbuf limited 50%", res: withTCP(streamResult(spec.TCPStream, 1e9), 100, 0, 50, 0), want: result.LimitSendBuffer},
		{name: "sndbuf limited 49.9%", res: withTCP(streamResult(spec.TCPStream, 1e9), 100, 0, 49.9, 0), want: result.LimitUnknown},
		{name: "rwnd limited 50%", res: rwnd(50), want: result.LimitReceiveWindow},
		// A window the user fixed is the limit from 25% with no CPU
		// bound; one the kernel sized, only from 50%.
		{name: "fixed rwnd limited 49.9%", res: rwnd(49.9), want: result.LimitReceiveWindow},
		{name: "fixed rwnd limited 25%", res: rwnd(25), want: result.LimitReceiveWindow},
		{name: "fixed rwnd limited 24.9%", res: rwnd(24.9), want: result.LimitUnknown},
		{name: "rwnd limited 49.9%", res: unfixed(49.9), want: result.LimitUnknown},
		{name: "in flight 40% of a fixed buffer", res: inFlight(312500), want: result.LimitReceiveWindow},
		{name: "in flight 39.9% of a fixed buffer", res: inFlight(312813), want: result.LimitUnknown},
		// TCP -b 200M: paced like UDP's -b, the cap from 90% of it.
		{name: "tcp rate at 90%", res: tcpCap(180e6), want: result.LimitRateCap},
		{name: "tcp rate at 89.9%", res: tcpCap(179.8e6), want: result.LimitUnknown},
		{name: "retransmits 1%", res: retrans(1000), want: result.LimitCongestion},
		{name: "retransmits 0.999%", res: retrans(999), want: result.LimitUnknown},
		{name: "UDP loss 1%", res: udpLoss(1), want: result.LimitUnknown, note: "1.0% of the datagrams were lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Diagnose(tt.res)
			l := tt.res.Summary.Limit
			if l == nil {
				t.Fatal("no limit set")
			}
			if l.Kind != tt.want {
				t.Errorf("limit %s, want %s; notes %q", l.Kind, tt.want, report.WarningTexts(l.Notes))
			}
			if notes := strings.Join(report.WarningTexts(l.Notes), "; "); tt.note != "" && !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q, want %q in them", notes, tt.note)
			}
		})
	}
	// Loss under 1% gets no note.
	r := udpLoss(0.99)
	Diagnose(r)
	if notes := strings.Join(report.WarningTexts(r.Summary.Limit.Notes), "; "); strings.Contains(notes, "were lost") {
		t.Errorf("0.99%% loss: notes %q, want no loss note", notes)
	}
}
