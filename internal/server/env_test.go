package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/testkit"
)

// ncServer runs a server on 127.0.0.1:0 with cfg until the returned stop
// is called or the test ends; prepare may set the server's test hooks
// before it serves.
func ncServer(t *testing.T, cfg Config, prepare func(*Server)) (addr string, stop func()) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv := New(cfg)
	if prepare != nil {
		prepare(srv)
	}
	return testkit.Serve(t, srv.Serve)
}

func ncDial(t *testing.T, addr string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), client.Config{Addr: addr, Tool: "test", Hostname: "client"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestEnvRequest: the server answers env with its record for the route to
// the client, and sends the same with its results.
func TestEnvRequest(t *testing.T) {
	defer goleak.VerifyNone(t)
	addr, stop := ncServer(t, Config{Hostname: "server"}, nil)
	defer stop()
	c := ncDial(t, addr)
	defer c.Close()
	env, err := c.RefreshEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if env == nil || env.Interface == nil || env.Interface.Name != "lo" || env.Peer != "127.0.0.1" || env.KernelRelease == "" {
		t.Fatalf("env = %+v", env)
	}
	sp := spec.Default()
	sp.Duration, sp.Interval = 200*time.Millisecond, 0
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if res.Local.Env == nil || res.Remote.Env == nil {
		t.Fatalf("records missing from the result: local %v, remote %v", res.Local.Env != nil, res.Remote.Env != nil)
	}
	if res.Remote.Env.Interface == nil || res.Remote.Env.Interface.MTU <= 0 {
		t.Errorf("remote env %+v", res.Remote.Env)
	}
}

// TestBaselineOncePerSession: the server takes its idle CPU baseline as
// a session starts, once, sends it in its env record with every
// result of the session, and takes it again in the next session; the
// client does the same on its side.
func TestBaselineOncePerSession(t *testing.T) {
	var calls atomic.Int32 // the baseline runs on a goroutine of its own
	real := takeBaseline
	takeBaseline = func(ctx context.Context, procRoot string, window time.Duration) (*measure.CPUBaseline, error) {
		calls.Add(1)
		return real(ctx, procRoot, window)
	}
	defer func() { takeBaseline = real }()
	addr, stop := ncServer(t, Config{Hostname: "server"}, nil)
	defer stop()
	sp := spec.Default()
	sp.Duration, sp.Interval, sp.CPU = 200*time.Millisecond, 0, true
	for session := 1; session <= 2; session++ {
		c := ncDial(t, addr)
		var first *measure.CPUBaseline
		for run := 1; run <= 3; run++ {
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			if n := int(calls.Load()); n != session {
				t.Fatalf("session %d run %d: %d baselines taken, want %d", session, run, n, session)
			}
			env := res.Remote.Env
			if env == nil || env.CPUBaseline == nil || res.Local.Env == nil || res.Local.Env.CPUBaseline == nil {
				t.Fatalf("session %d run %d: a side has no baseline: remote %+v local %+v", session, run, env, res.Local.Env)
			}
			b := *env.CPUBaseline
			window := sysinfo.BaselineWindow // from /proc/stat's ticks
			if b.Source == measure.BaselineIdleResidency {
				window = sysinfo.ResidencyBaselineWindow
			}
			if b.WindowS < window.Seconds() || b.WindowS > 2 || b.UtilPct < 0 || b.UtilPct > 100 {
				t.Errorf("server baseline %+v: want a window of at least %v and a percentage", b, window)
			}
			if rc := res.Summary.RemoteCPU; rc == nil || rc.Baseline == nil || *rc.Baseline != b {
				t.Errorf("remote CPU figures carry %+v, want the env's %+v", rc, b)
			}
			if first == nil {
				first = &b
			} else if b != *first {
				t.Errorf("session %d run %d: baseline %+v, want the first run's %+v", session, run, b, *first)
			}
		}
		c.Close()
	}
}

// TestRelayDoesNotWaitForBaseline: the session's baseline runs beside
// it as it opens; a relay request is answered without waiting for it (a
// session that only relays carries no baseline in any result), and a
// test waits for it and carries it. Before, the session read nothing
// until its baseline was taken, and a mesh's relayed pair waited for two
// baselines one after the other.
func TestRelayDoesNotWaitForBaseline(t *testing.T) {
	release := make(chan struct{})
	real := takeBaseline
	takeBaseline = func(ctx context.Context, procRoot string, window time.Duration) (*measure.CPUBaseline, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &measure.CPUBaseline{WindowS: 0.2, UtilPct: 42}, nil
	}
	defer func() { takeBaseline = real }()
	addr, stop := ncServer(t, Config{Hostname: "server", Auth: Auth{PSK: []byte("0123456789abcdef0123")}}, nil)
	defer stop()
	c := ncDialKey(t, addr, []byte("0123456789abcdef0123"))

	// Not allowed to relay: refused at once, with the baseline held.
	start := time.Now()
	_, err := c.Relay(context.Background(), control.RelayRequest{Peer: addr, Spec: spec.Default()})
	if !errors.Is(err, control.ErrRelayRefused) {
		t.Fatalf("relay: %v, want refused", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the relay refusal took %v: it waited for the baseline", took)
	}

	// A test waits for the baseline, then carries it.
	sp := spec.Default()
	sp.Duration, sp.Interval, sp.CPU = 200*time.Millisecond, 0, true
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := c.Run(context.Background(), sp)
		if err != nil {
			t.Error(err)
			return
		}
		if b := res.Remote.Env.CPUBaseline; b == nil || b.UtilPct != 42 {
			t.Errorf("the test's record carries baseline %+v, want the session's (42%%)", b)
		}
	}()
	select {
	case <-done:
		t.Fatal("the test ran before the session's baseline was taken")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	<-done
}

// TestEnvRequestsRateLimited: a client that asks for the environment
// record in a loop gets the session's record, collected again envBurst
// times at once and then at most once a second (envMinAge). Before,
// every request collected one: 5,658 requests in 20 s cost the server
// 11.6 CPU-s. A matrix's few requests in quick succession each get a
// fresh record.
func TestEnvRequestsRateLimited(t *testing.T) {
	var calls atomic.Int64
	real := collectHost
	collectHost = func(ctx context.Context, o sysinfo.Options) (sysinfo.Env, []string, error) {
		calls.Add(1)
		return real(ctx, o)
	}
	defer func() { collectHost = real }()
	addr, _ := ncServer(t, Config{}, nil)
	c := ncDial(t, addr)
	// A matrix's rows: a few requests in quick succession, each after a
	// change the server did not make, each collected.
	for i := range 3 {
		before := calls.Load()
		if _, err := c.RefreshEnv(context.Background()); err != nil {
			t.Fatal(err)
		}
		if calls.Load() == before {
			t.Fatalf("request %d of 3 in quick succession got the old record", i+1)
		}
	}
	start := time.Now()
	const requests = 200
	for range requests {
		if _, err := c.RefreshEnv(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	// The first one, the burst, then one a second at most.
	if n, most := calls.Load(), 1+envBurst+int64(took/envMinAge)+1; n > most {
		t.Errorf("%d env requests in %v made the server collect %d records, want at most %d", requests, took.Round(time.Millisecond), n, most)
	}
	// After envMinAge the record is collected again.
	time.Sleep(envMinAge)
	before := calls.Load()
	if _, err := c.RefreshEnv(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() == before {
		t.Errorf("a request %v after the last collection did not collect again", envMinAge)
	}
}
