// Package servertest starts wirespeed servers on loopback for tests and
// dials them, as ndt-server's ndt7test does for its handlers: Start runs a
// server for the length of a test, Dial opens a client that is closed
// when the test ends. It is test-only, like testkit, on which it builds;
// it sits above server and client in the import order, so only the tests
// of packages above them (and their external tests, package x_test) can
// import it.
package servertest

import (
	"context"
	"log/slog"
	"testing"

	"wirespeed/internal/client"
	"wirespeed/internal/server"
	"wirespeed/internal/testkit"
)

// Start runs a server with cfg on a free port of 127.0.0.1 until stop is
// called or the test ends (testkit.Serve) and returns its address. A nil
// cfg.Logger discards the server's log.
func Start(t testing.TB, cfg server.Config) (addr string, stop func()) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return testkit.Serve(t, server.New(cfg).Serve)
}

// Dial opens a client with cfg (Tool "test" unless set) and closes it
// when the test ends; it fails t if the client cannot connect.
func Dial(t testing.TB, cfg client.Config) *client.Client {
	t.Helper()
	c, err := TryDial(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TryDial is Dial for tests of a failing dial: it returns the error.
func TryDial(t testing.TB, cfg client.Config) (*client.Client, error) {
	t.Helper()
	if cfg.Tool == "" {
		cfg.Tool = "test"
	}
	c, err := client.Dial(context.Background(), cfg)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}
