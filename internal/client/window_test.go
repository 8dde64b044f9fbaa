package client_test

import (
	"context"
	"math"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// TestWindowPacedOmit holds each side's count to its own window: with a
// paced sender and a warm-up (--omit), the bytes counted are the asked
// rate times the window's measured length, within 1%, on both sides, and
// the window is as long as asked. A window that kept the warm-up's bytes
// would count half as much again.
func TestWindowPacedOmit(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	sp := spec.Default()
	sp.Kind = spec.UDPStream
	sp.SendSize = spec.DefaultUDPSize
	sp.RateBitsPerSecond = 40e6
	sp.Omit = time.Second
	sp.Duration = 2 * time.Second
	sp.Interval = 0
	const bytesPerSecond = 40e6 / 8
	// Only a starved sender (below the asked rate) is tried again: a count
	// above what the window allows is the bug this test is for.
	for attempt := 1; ; attempt++ {
		res, err := c.Run(context.Background(), sp)
		if err != nil {
			t.Fatal(err)
		}
		s := res.Directions[0].Summary
		for _, side := range []struct {
			name    string
			bytes   int64
			elapsed float64
		}{{"sender", s.SenderBytes, s.SenderElapsedS}, {"receiver", s.Bytes, s.ElapsedS}} {
			if math.Abs(side.elapsed-sp.Duration.Seconds()) > 0.05 {
				t.Errorf("%s window %.3f s, asked %v (more than 50 ms off)", side.name, side.elapsed, sp.Duration)
			}
			want := bytesPerSecond * side.elapsed
			if float64(side.bytes) > 1.01*want {
				t.Fatalf("%s counted %d bytes in %.3f s, more than 1%% above the rate's %.0f: bytes from outside the window?", side.name, side.bytes, side.elapsed, want)
			}
		}
		sent := float64(s.SenderBytes) / (bytesPerSecond * s.SenderElapsedS)
		rcvd := float64(s.Bytes) / (bytesPerSecond * s.ElapsedS)
		if sent >= 0.99 && rcvd >= 0.99 {
			return
		}
		t.Logf("attempt %d: sender %.4f, receiver %.4f of the asked rate (starved)", attempt, sent, rcvd)
		if attempt == 3 {
			t.Fatalf("sender reached %.4f and receiver %.4f of the asked rate in 3 attempts, want at least 0.99", sent, rcvd)
		}
	}
}
