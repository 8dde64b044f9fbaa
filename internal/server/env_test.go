package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"wirespeed/internal/client"
	"wirespeed/internal/spec"
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
