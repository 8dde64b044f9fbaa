package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/result"
)

// TestReportText: the table names each check with its verdict, the
// truths below, and the last line counts what failed.
func TestReportText(t *testing.T) {
	r := result.VerifyReport{Kernel: "6.1.0", Started: time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC), ElapsedS: 35}
	r.Add(result.VerifyCheck{Name: "tcp-throughput", Figure: "TCP goodput, 1 stream", Unit: "Mbit/s", Measured: 90.99, Truth: 95.64,
		TruthIs: "the tbf", Tolerance: result.VerifyTolerance{Low: -3, High: 2, Relative: true}, Command: "wirespeed run 10.77.0.1:7575 -l 3"})
	r.Add(result.VerifyCheck{Name: "rr-transactions", Figure: "UDP_RR requests", Unit: "packets", Measured: 95430, Truth: 95448,
		TruthIs: "tx_packets", Tolerance: result.VerifyTolerance{Low: -1, High: 1, Relative: true}})
	r.Add(result.VerifyCheck{Name: "rtt-idle", Figure: "idle", Unit: "ms", Skipped: "irtt is not installed", Tolerance: result.VerifyTolerance{Low: -30, High: 30, Relative: true}})
	r.Add(result.VerifyCheck{Name: "udp-loss", Figure: "lost", Unit: "%", Failed: "the router's tbf dropped nothing", Tolerance: result.VerifyTolerance{Low: -5, High: 5, Relative: true}})
	r.Finish()
	if r.OK {
		t.Fatal("report ok with a check out of its tolerance")
	}
	var b bytes.Buffer
	if err := VerifyText(&b, r); err != nil {
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
	for tol, want := range map[result.VerifyTolerance]string{
		{Low: -3, High: 2, Relative: true}:  "-3%..+2%",
		{Low: -5, High: 5, Relative: true}:  "±5%",
		{Low: -10, High: 10}:                "±10",
		{Low: -40, High: 5, Relative: true}: "-40%..+5%",
	} {
		if got := verifyTolerance(tol); got != want {
			t.Errorf("%+v printed %q, want %q", tol, got, want)
		}
	}
}
