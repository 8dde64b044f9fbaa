package client_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// TestIterateOnLoopback: iterations are full runs on one control
// connection.
func TestIterateOnLoopback(t *testing.T) {
	addr, _ := startServer(t, server.Config{})
	c := dial(t, client.Config{Addr: addr})
	sp := shortSpec(spec.TCPStream, 1)
	sp.Duration = 150 * time.Millisecond
	sp.Interval = 0
	sp.CPU = true
	res, err := c.Iterate(context.Background(), sp, spec.Repeat{MaxIterations: 2, MinIterations: 2, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Iterations) != 2 || res.Summary.Confidence == nil || res.Summary.Confidence.Iterations != 2 {
		t.Fatalf("iterations %d, confidence %+v", len(res.Iterations), res.Summary.Confidence)
	}
	if res.Iterations[0].Started.Equal(res.Iterations[1].Started) || res.Iterations[0].LocalCPU == nil {
		t.Errorf("iterations %+v", res.Iterations)
	}
	if _, err := json.Marshal(result.Document{Result: res}); err != nil {
		t.Errorf("encode: %v", err)
	}
}
