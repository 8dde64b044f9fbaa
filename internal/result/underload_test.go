package result

import (
	"math"
	"testing"
	"time"

	"wirespeed/internal/spec"
)

// TestUnderLoadOf computes an RRUL answer from probes placed by hand
// around a load from 2 s to 4 s, and checks each figure against the
// arithmetic in the comments. A probe sent as the load starts is loaded
// (not idle too); one sent as it ends is in neither phase.
func TestUnderLoadOf(t *testing.T) {
	sp := spec.Default()
	sp.RRUL = spec.DefaultRRUL()
	sp.Interval = time.Second
	rec := ProbeRecord{LoadStartS: 2, LoadEndS: 4,
		UDP: []ProbePoint{
			{T: 0.5, RTTMs: 1}, {T: 1, RTTMs: 2}, {T: 1.5, Lost: true}, // idle
			{T: 2, RTTMs: 10}, {T: 3, RTTMs: 20}, {T: 3.5, Lost: true}, // loaded
			{T: 4, RTTMs: 99}, // after the load: neither
		},
		TCP: []ProbePoint{
			{T: 1, RTTMs: 3, ConnectMs: 1},                         // idle
			{T: 2.5, RTTMs: 30, ConnectMs: 10}, {T: 3, Lost: true}, // loaded; the second never connected
			{T: 4, RTTMs: 77, ConnectMs: 7}, // neither
		},
	}
	u := UnderLoadOf(sp, rec, nil)
	check := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s %v, want %v", what, got, want)
		}
	}
	check("idle phase (s)", u.IdleS, 2)
	check("loaded phase (s)", u.LoadedS, 2)
	// Idle: UDP 1, 2 and one lost; TCP 3 (handshake 1): all 1, 2, 3.
	if l := u.Idle.UDP; l.Samples != 2 || l.Lost != 1 {
		t.Errorf("idle UDP %+v, want 2 answered, 1 lost", l)
	}
	if l := u.Idle.All; l.Samples != 3 || l.Lost != 1 {
		t.Errorf("idle, all %+v, want 3 answered, 1 lost", l)
	}
	check("idle median", u.Idle.All.P50Ms, 2)
	// Loaded: UDP 10, 20 and one lost; TCP 30 and one lost (its
	// handshake failed too): all 10, 20, 30, 2 lost.
	if l := u.Loaded.UDP; l.Samples != 2 || l.Lost != 1 {
		t.Errorf("loaded UDP %+v, want 2 answered, 1 lost", l)
	}
	if l := u.Loaded.TCP; l.Samples != 1 || l.Lost != 1 {
		t.Errorf("loaded TCP %+v, want 1 answered, 1 lost", l)
	}
	if l := u.Loaded.TCPConnect; l.Samples != 1 || l.Lost != 1 || l.P50Ms != 10 {
		t.Errorf("loaded TCP handshakes %+v, want one of 10 ms, 1 failed", l)
	}
	if l := u.Loaded.All; l.Samples != 3 || l.Lost != 2 {
		t.Errorf("loaded, all %+v, want 3 answered, 2 lost", l)
	}
	check("loaded mean", u.Loaded.All.MeanMs, 20)
	// The medians 20 - 2; the 99th percentiles (type 7: 2 + 0.98 and
	// 20 + 0.98·10) 29.8 - 2.98.
	check("increase", u.IncreaseMs, 18)
	check("increase at p99", u.IncreaseP99Ms, 29.8-2.98)
	// Responsiveness: the loaded handshakes' trimmed mean 10 ms and the
	// request/responses' 30 ms, averaged: 20 ms, 3000 round trips a
	// minute.
	check("responsiveness (RPM)", u.ResponsivenessRPM, 3000)
}
