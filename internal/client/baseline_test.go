package client_test

import (
	"context"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/measure"
	"wirespeed/internal/server"
	"wirespeed/internal/servertest"
	"wirespeed/internal/spec"
)

// TestBaselineOncePerConnection: the client takes its idle CPU baseline
// once per control connection, as Dial ends, before any test, and puts
// it in its env record for every run; a new connection takes one again.
func TestBaselineOncePerConnection(t *testing.T) {
	calls := 0
	real := *client.TakeBaseline
	*client.TakeBaseline = func(ctx context.Context, procRoot string, window time.Duration) (*measure.CPUBaseline, error) {
		calls++
		return real(ctx, procRoot, window)
	}
	defer func() { *client.TakeBaseline = real }()
	addr, stop := servertest.Start(t, server.Config{})
	defer stop()
	sp := spec.Default()
	sp.Duration, sp.Interval, sp.CPU = 200*time.Millisecond, 0, true
	for conn := 1; conn <= 2; conn++ {
		c := servertest.Dial(t, client.Config{Addr: addr})
		if calls != conn {
			t.Fatalf("connection %d: %d baselines taken by the end of Dial, want %d", conn, calls, conn)
		}
		var first measure.CPUBaseline
		for run := 1; run <= 2; run++ {
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			if calls != conn {
				t.Fatalf("connection %d run %d: %d baselines taken, want %d", conn, run, calls, conn)
			}
			if res.Local.Env == nil || res.Local.Env.CPUBaseline == nil {
				t.Fatalf("connection %d run %d: no local baseline in %+v", conn, run, res.Local.Env)
			}
			b := *res.Local.Env.CPUBaseline
			if lc := res.Summary.LocalCPU; lc == nil || lc.Baseline == nil || *lc.Baseline != b {
				t.Errorf("local CPU figures carry %+v, want the env's %+v", lc, b)
			}
			if run == 1 {
				first = b
			} else if b != first {
				t.Errorf("run 2 baseline %+v, want the first run's %+v", b, first)
			}
		}
		c.Close()
	}
}

// TestRelayOnlyTakesNoBaseline: a connection that only relays (a mesh's
// runner for a pair it is not in) does not wait for a baseline no result
// carries; a Run on it has none in its record.
func TestRelayOnlyTakesNoBaseline(t *testing.T) {
	calls := 0
	real := *client.TakeBaseline
	*client.TakeBaseline = func(ctx context.Context, procRoot string, window time.Duration) (*measure.CPUBaseline, error) {
		calls++
		return real(ctx, procRoot, window)
	}
	defer func() { *client.TakeBaseline = real }()
	addr, stop := servertest.Start(t, server.Config{})
	defer stop()
	c := servertest.Dial(t, client.Config{Addr: addr, RelayOnly: true})
	defer c.Close()
	if calls != 0 {
		t.Fatalf("a relay-only Dial took %d baselines, want none", calls)
	}
	sp := spec.Default()
	sp.Duration, sp.Interval, sp.CPU = 200*time.Millisecond, 0, true
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 0 || res.Local.Env == nil || res.Local.Env.CPUBaseline != nil {
		t.Errorf("%d baselines, local record %+v: want none", calls, res.Local.Env)
	}
}
