package client_test

import (
	"context"
	"math"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/report"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// TestCPUSidesAgree: a client and a server on one host read the same
// /proc/stat over the same measurement window, so their system-wide
// utilization agrees within 2 points. The two windows are not quite the
// same span: the sender's opens Omit after it started, the receiver's
// Omit after its first byte, and each samples when its sampler wakes;
// the test reports how far apart they were.
func TestCPUSidesAgree(t *testing.T) {
	testkit.Serial(t)
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	for _, tt := range []struct {
		name string
		kind spec.Kind
		rate float64
	}{
		{"tcp full speed", spec.TCPStream, 0},
		{"udp paced", spec.UDPStream, 200e6},
		{"tcp reverse", spec.TCPMaerts, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp := shortSpec(tt.kind, 1)
			sp.Duration, sp.Interval, sp.CPU = time.Second, 0, true
			if tt.kind == spec.UDPStream {
				sp.SendSize, sp.RateBitsPerSecond = spec.DefaultUDPSize, tt.rate
			}
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			l, r := res.Summary.LocalCPU, res.Summary.RemoteCPU
			if l == nil || r == nil {
				t.Fatalf("CPU figures missing: local %v, remote %v (warnings %q)", l, r, report.WarningTexts(res.Warnings))
			}
			d := res.Directions[0].Summary
			t.Logf("client %.2f%%, server %.2f%% busy over %d CPUs; sender window %.4f s, receiver %.4f s",
				l.UtilPct, r.UtilPct, l.CPUs, d.SenderElapsedS, d.ElapsedS)
			if l.CPUs != r.CPUs {
				t.Errorf("client counts %d CPUs, server %d: one host", l.CPUs, r.CPUs)
			}
			if diff := math.Abs(l.UtilPct - r.UtilPct); diff > 2 {
				t.Errorf("client's utilization %.2f%%, server's %.2f%%: %.2f points apart on one host, want at most 2", l.UtilPct, r.UtilPct, diff)
			}
		})
	}
}
