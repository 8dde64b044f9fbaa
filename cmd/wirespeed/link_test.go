package main

import (
	"fmt"
	"math"
	"testing"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// The shaped-link tests measure rates: they call testkit.Serial, and
// .ci/run runs them alone in a `go test -p 1` step, so that no other
// package's tests load the CPU meanwhile.

// TestTCPOverShapedLink measures TCP_STREAM over a tbf-limited veth: the
// receiver gets the link's rate less the headers, within 2%. tbf counts
// Ethernet frames without the FCS (GSO packets counted per segment):
// each segment of snd_mss payload bytes carries 14 (Ethernet) + 20 (IPv4)
// + 20 (TCP) + 12 (the timestamps option) bytes of headers, so the payload
// rate is rate * mss / (mss + 66). The MSS is the one the result reports.
// Cubic, because bbr and a 5 ms queue fight (bbr loses several percent to
// retransmissions there); a second of warm-up keeps slow start out.
func TestTCPOverShapedLink(t *testing.T) {
	testkit.Serial(t)
	const rate = 50e6
	l := nstest.NewLab(t, lab.Config{RateBitsPerSecond: rate})
	addr := labServer(t, l, 7575)
	// On a shared machine the sender may be starved of CPU now and then:
	// a run that falls short while its CPU figures show it is tried again,
	// up to three times in all; one that overshoots is not.
	var doc result.Document
	testkit.RetryRate(t, 3, func(int) testkit.RateAttempt {
		doc = labRun(t, l, addr, "-l", "3", "--omit", "1", "-i", "0", "--cc", "cubic", "--cpu")
		if len(doc.Streams) != 1 || doc.Streams[0].Sender.TCPInfo == nil {
			t.Fatalf("no TCP_INFO of the sender in %+v", doc.Streams)
		}
		mss := float64(doc.Streams[0].Sender.TCPInfo.SndMSS)
		return testkit.RateAttempt{
			Got: doc.Summary.BitsPerSecond, Want: rate * mss / (mss + 14 + 20 + 20 + 12), Tol: 0.02,
			Starved: senderStarved(doc), Detail: fmt.Sprintf("receiver's rate against the link's payload rate (mss %.0f)", mss),
		}
	})
	checkElapsed(t, doc, 3)
}

// checkElapsed checks that both windows of a run lasted the asked
// seconds within 50 ms: the rate tests run alone (testkit.Serial), where
// the samplers wake on time.
func checkElapsed(t *testing.T, doc result.Document, seconds float64) {
	t.Helper()
	s := doc.Summary
	if math.Abs(s.ElapsedS-seconds) > 0.05 || math.Abs(s.SenderElapsedS-seconds) > 0.05 {
		t.Errorf("receiver's window %.4f s, sender's %.4f s, asked %g s: more than 50 ms off", s.ElapsedS, s.SenderElapsedS, seconds)
	}
}

// senderStarved is the sender's CPU evidence of a run whose client (the
// local side) sent: see testkit.CPUStarved.
func senderStarved(doc result.Document) string {
	c := doc.Summary.LocalCPU
	if c == nil {
		return ""
	}
	return testkit.CPUStarved(c.UtilPct, c.BusiestCPUPct, c.StealPct, c.OtherProcessesUtilPct)
}
