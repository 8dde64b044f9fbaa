package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/exporter"
)

// TestExporterMeasureMarksNotReached (issue 47, item 9): the modules'
// measurement marks a target it could not reach as a wirespeed server
// (a closed port, an SSH server) with exporter.ErrNotReached, which makes
// the exporter tell its client one sentence at the deadline
// (exporter/TestProbeTellsNothingOfNonServers); the cause stays in the
// error, for the exporter's log.
func TestExporterMeasureMarksNotReached(t *testing.T) {
	c, err := exporter.Parse([]byte("modules:\n  tcp:\n    length: 1s\n"), moduleBuilder(&env{}))
	if err != nil {
		t.Fatal(err)
	}
	plan := c.Modules["tcp"].Plan
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	ssh, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ssh.Close()
	go func() {
		for {
			c, err := ssh.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
			defer c.Close()
		}
	}()
	for addr, cause := range map[string]string{closed: "refused", ssh.Addr().String(): "SSH server"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := plan.Measure(ctx, addr, plan.Test, slog.New(slog.DiscardHandler))
		cancel()
		if !errors.Is(err, exporter.ErrNotReached) || !strings.Contains(err.Error(), cause) {
			t.Errorf("%s: %v; want exporter.ErrNotReached with the cause, %q", addr, err, cause)
		}
	}
}
