package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

func rrulSpec(idle, length time.Duration) spec.Test {
	sp := spec.Default()
	sp.Kind = spec.RRUL
	sp.Parallel = 2
	sp.Duration = length
	sp.RRUL = spec.DefaultRRUL()
	sp.RRUL.Idle = idle
	return sp
}

// TestRRULCountsAgainstMaxParallel: the flows of both directions and the
// two probes count against the server's --max-parallel: 4 flows and 2
// probes do not fit in 5, and the refusal says what to do.
func TestRRULCountsAgainstMaxParallel(t *testing.T) {
	addr, _ := startServer(t, server.Config{Admission: server.Admission{MaxParallel: 5}})
	c := dial(t, client.Config{Addr: addr})
	_, err := c.Run(context.Background(), rrulSpec(time.Second, time.Second))
	if err == nil || !strings.Contains(err.Error(), "6 connections (4 flows and 2 probes)") || !strings.Contains(err.Error(), "--max-parallel") {
		t.Fatalf("err %v, want a refusal counting 6 connections against --max-parallel", err)
	}
	// One flow each way fits: 2 flows and 2 probes.
	sp := rrulSpec(time.Second, time.Second)
	sp.Parallel = 1
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatalf("RRUL within the limit: %v", err)
	}
	if res.Summary.UnderLoad == nil {
		t.Fatal("no under_load")
	}
}

// TestRRULInterrupted: a run stopped in its idle phase keeps the idle
// probes and says the load never came; one stopped under load keeps both
// phases, the loaded one as long as it lasted.
func TestRRULInterrupted(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	for _, tt := range []struct {
		name       string
		idle       time.Duration
		stopAfter  time.Duration
		wantLoaded bool
	}{
		{"in the idle phase", 3 * time.Second, 1500 * time.Millisecond, false},
		{"under load", time.Second, 2500 * time.Millisecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			ctx, cancel := context.WithTimeout(context.Background(), tt.stopAfter)
			defer cancel()
			res, err := c.Run(ctx, rrulSpec(tt.idle, 10*time.Second))
			if err != nil {
				t.Fatalf("interrupted run: %v", err)
			}
			u := res.Summary.UnderLoad
			switch {
			case !res.Interrupted:
				t.Error("not marked interrupted")
			case u == nil:
				t.Fatal("no under_load in an interrupted RRUL run")
			}
			// Probes every 20 ms: about 50 a second of the idle phase.
			idle := min(tt.idle, tt.stopAfter).Seconds()
			if n := u.Idle.UDP.Samples + u.Idle.UDP.Lost; float64(n) < 0.7*idle*50 || float64(n) > idle*50+2 {
				t.Errorf("%d idle UDP probes in %.1f s, want about %.0f", n, idle, idle*50)
			}
			if !tt.wantLoaded {
				if u.Loaded.All.Samples != 0 || u.LoadedS != 0 {
					t.Errorf("loaded phase of %.1f s with %d samples in a run stopped before the load", u.LoadedS, u.Loaded.All.Samples)
				}
				return
			}
			loaded := (tt.stopAfter - tt.idle).Seconds()
			if u.LoadedS < 0.5*loaded || u.LoadedS > loaded+0.5 {
				t.Errorf("loaded phase %.2f s, stopped after about %.1f s of load", u.LoadedS, loaded)
			}
			if u.Loaded.UDP.Samples < 20 {
				t.Errorf("%d loaded UDP samples", u.Loaded.UDP.Samples)
			}
			if u.UpBitsPerSecond <= 0 || u.DownBitsPerSecond <= 0 {
				t.Errorf("up %g down %g bit/s: the partial load's throughput is lost", u.UpBitsPerSecond, u.DownBitsPerSecond)
			}
		})
	}
}
