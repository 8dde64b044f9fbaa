package client_test

import (
	"context"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// TestEnvInResults: every result carries both sides' environment records,
// each describing the interface of the route to the other side; the
// client collects its record once per connection, and again after
// RefreshEnv.
func TestEnvInResults(t *testing.T) {
	addr, _ := startServer(t, server.Config{Hostname: "srv"})
	c := dial(t, client.Config{Addr: addr, Hostname: "cli"})
	sp := spec.Default()
	sp.Duration, sp.Interval = 200*time.Millisecond, 0
	ctx := context.Background()
	r1, err := c.Run(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Local.Env == nil || r1.Local.Env.Interface == nil || r1.Remote.Env == nil || r1.Remote.Env.Interface == nil {
		t.Fatalf("records missing or without an interface: local %+v, remote %+v", r1.Local.Env, r1.Remote.Env)
	}
	if n := r1.Local.Env.Interface.Name; n != "lo" {
		t.Errorf("local interface %q, want lo (the route to 127.0.0.1)", n)
	}
	if r1.Local.Env.Peer != "127.0.0.1" || r1.Remote.Env.Peer != "127.0.0.1" {
		t.Errorf("peers %q and %q, want 127.0.0.1", r1.Local.Env.Peer, r1.Remote.Env.Peer)
	}
	r2, err := c.Run(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Local.Env != r1.Local.Env {
		t.Error("the client collected its record again for the second run; it should keep it for the connection")
	}
	remote, err := c.RefreshEnv(ctx)
	if err != nil || remote == nil || remote.Interface == nil {
		t.Fatalf("RefreshEnv = %v, %v", remote, err)
	}
	r3, err := c.Run(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if r3.Local.Env == r1.Local.Env || r3.Local.Env == nil {
		t.Error("after RefreshEnv the client kept its old record")
	}
}
