package verify

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// TestJudge: the error and the verdict, worked out by hand.
func TestJudge(t *testing.T) {
	rel := Tolerance{Low: -3, High: 2, Relative: true}
	tests := []struct {
		name            string
		c               Check
		wantErr, wantPc float64
		ok              bool
	}{
		// 95.26 against 95.64: -0.38, -0.397%.
		{"within", Check{Measured: 95.26, Truth: 95.64, Tolerance: rel}, -0.38, -0.3973, true},
		// 90.99 against 95.64: -4.862%, below -3%.
		{"below", Check{Measured: 90.99, Truth: 95.64, Tolerance: rel}, -4.65, -4.862, false},
		// 97.6 against 95.64: +2.049%, above +2%.
		{"above", Check{Measured: 97.6, Truth: 95.64, Tolerance: rel}, 1.96, 2.049, false},
		// On the edge: -3% exactly is within.
		{"edge", Check{Measured: 97, Truth: 100, Tolerance: rel}, -3, -3, true},
		// Absolute: 88 against 99.75 is -11.75 points, out of ±10.
		{"points", Check{Measured: 88, Truth: 99.75, Tolerance: Tolerance{Low: -10, High: 10}}, -11.75, -11.779, false},
		{"points within", Check{Measured: 91, Truth: 99.75, Tolerance: Tolerance{Low: -10, High: 10}}, -8.75, -8.772, true},
		// No truth for a relative tolerance: out.
		{"no truth", Check{Measured: 1, Truth: 0, Tolerance: rel}, 1, 0, false},
		{"not a number", Check{Measured: math.NaN(), Truth: 1, Tolerance: rel}, math.NaN(), math.NaN(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			c.judge()
			if c.OK != tt.ok {
				t.Errorf("ok %v, want %v (error %g, %g%%)", c.OK, tt.ok, c.Error, c.ErrorPct)
			}
			if !math.IsNaN(tt.wantErr) && (math.Abs(c.Error-tt.wantErr) > 1e-9 || math.Abs(c.ErrorPct-tt.wantPc) > 1e-3) {
				t.Errorf("error %g (%g%%), want %g (%g%%)", c.Error, c.ErrorPct, tt.wantErr, tt.wantPc)
			}
		})
	}
	// A check skipped for want of a truth passes; one not measured fails.
	s := Check{Skipped: "irtt is not installed"}
	s.judge()
	f := Check{Failed: "the run failed"}
	f.judge()
	if !s.OK || f.OK {
		t.Errorf("skipped ok %v (want true), failed ok %v (want false)", s.OK, f.OK)
	}
}

// TestReportText: the table names each check with its verdict, the
// truths below, and the last line counts what failed.
func TestReportText(t *testing.T) {
	r := Report{Kernel: "6.1.0", Started: time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC), ElapsedS: 35}
	r.add(Check{Name: "tcp-throughput", Figure: "TCP goodput, 1 stream", Unit: "Mbit/s", Measured: 90.99, Truth: 95.64,
		TruthIs: "the tbf", Tolerance: Tolerance{Low: -3, High: 2, Relative: true}, Command: "wirespeed run 10.77.0.1:7575 -l 3"})
	r.add(Check{Name: "rr-transactions", Figure: "UDP_RR requests", Unit: "packets", Measured: 95430, Truth: 95448,
		TruthIs: "tx_packets", Tolerance: Tolerance{Low: -1, High: 1, Relative: true}})
	r.add(Check{Name: "rtt-idle", Figure: "idle", Unit: "ms", Skipped: "irtt is not installed", Tolerance: Tolerance{Low: -30, High: 30, Relative: true}})
	r.add(Check{Name: "udp-loss", Figure: "lost", Unit: "%", Failed: "the router's tbf dropped nothing", Tolerance: Tolerance{Low: -5, High: 5, Relative: true}})
	r.finish()
	if r.OK {
		t.Fatal("report ok with a check out of its tolerance")
	}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"tcp-throughput   TCP goodput, 1 stream (Mbit/s)",
		"90.99      95.64     -4.9%  -3%..+2%   OUT",
		"95430      95448     -0.0%  ±1%        ok",
		"rtt-idle         idle (ms)",
		"skipped",
		"FAILED",
		"  rtt-idle: skipped: irtt is not installed",
		"  udp-loss: not measured: the router's tbf dropped nothing",
		"    wirespeed run 10.77.0.1:7575 -l 3",
		"2 of 4 checks out of their tolerance or not measured: tcp-throughput, udp-loss",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text has no %q:\n%s", want, out)
		}
	}
	if bad := r.Failed(); len(bad) != 2 || bad[0].Name != "tcp-throughput" || bad[1].Name != "udp-loss" {
		t.Errorf("failed %v, want tcp-throughput and udp-loss", bad)
	}
}

// TestTolerancePrinted: how the table writes a tolerance.
func TestTolerancePrinted(t *testing.T) {
	for tol, want := range map[Tolerance]string{
		{Low: -3, High: 2, Relative: true}:  "-3%..+2%",
		{Low: -5, High: 5, Relative: true}:  "±5%",
		{Low: -10, High: 10}:                "±10",
		{Low: -40, High: 5, Relative: true}: "-40%..+5%",
	} {
		if got := tol.String(); got != want {
			t.Errorf("%+v printed %q, want %q", tol, got, want)
		}
	}
}

// TestTruthArithmetic: the truths' sizes, by hand: MSS 1448 at MTU 1500
// (1500 - 20 IP - 20 TCP - 12 timestamps), 8948 at 9000.
func TestTruthArithmetic(t *testing.T) {
	if mss(1500) != 1448 || mss(9000) != 8948 {
		t.Errorf("mss(1500) %d, mss(9000) %d, want 1448 and 8948", mss(1500), mss(9000))
	}
	if f := mss(1500) + tcpHeader + ipv4Header + ethHeader; f != 1514 {
		t.Errorf("a full frame at 1500 is %d bytes, want 1514", f)
	}
}
