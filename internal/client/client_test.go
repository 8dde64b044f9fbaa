package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/run"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// startServer runs a server on 127.0.0.1:0 until the test ends.
func startServer(t *testing.T, cfg server.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.New(cfg).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server did not stop within 10s")
		}
	})
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), client.Config{Addr: addr, Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestStreamKinds(t *testing.T) {
	addr := startServer(t, server.Config{})
	for _, kind := range spec.Kinds {
		for _, parallel := range []int{1, 4} {
			t.Run(string(kind)+"/P"+string(rune('0'+parallel)), func(t *testing.T) {
				c := dial(t, addr)
				sp := spec.Default()
				sp.Kind = kind
				sp.Parallel = parallel
				sp.Duration = 600 * time.Millisecond
				sp.Interval = 200 * time.Millisecond
				sp.CongestionControl = "cubic"
				var ticks []run.Tick
				res, err := c.Run(context.Background(), sp)
				if err != nil {
					t.Fatal(err)
				}
				_ = ticks
				checkResult(t, sp, res)
			})
		}
	}
}

// checkResult asserts what must hold for every complete stream run.
func checkResult(t *testing.T, sp spec.Test, res run.Result) {
	t.Helper()
	if res.Interrupted {
		t.Errorf("result marked interrupted")
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	dirs := sp.Kind.Directions()
	if len(res.Directions) != len(dirs) {
		t.Fatalf("got %d directions, want %d", len(res.Directions), len(dirs))
	}
	if len(res.Streams) != sp.Parallel*len(dirs) {
		t.Fatalf("got %d streams, want %d", len(res.Streams), sp.Parallel*len(dirs))
	}
	var sumRate float64
	for _, d := range res.Directions {
		s := d.Summary
		if s.Bytes <= 0 || s.SenderBytes <= 0 {
			t.Errorf("%s: bytes %d, sender bytes %d", d.Direction, s.Bytes, s.SenderBytes)
		}
		if want := float64(s.Bytes) * 8 / s.ElapsedS; math.Abs(s.BitsPerSecond-want) > 1e-6*want {
			t.Errorf("%s: throughput %g != bytes*8/elapsed %g", d.Direction, s.BitsPerSecond, want)
		}
		if math.Abs(s.ElapsedS-sp.Duration.Seconds()) > 0.1 {
			t.Errorf("%s: elapsed %.3fs, want about %v", d.Direction, s.ElapsedS, sp.Duration)
		}
		sumRate += s.BitsPerSecond
		var streamBytes int64
		for _, st := range d.Streams {
			streamBytes += st.Receiver.Bytes
			if !st.Receiver.Complete {
				t.Errorf("stream %d: receiver did not reach end of stream", st.ID)
			}
			if st.Sender.TotalBytes != st.Receiver.TotalBytes {
				t.Errorf("stream %d: sender moved %d bytes in all, receiver %d", st.ID, st.Sender.TotalBytes, st.Receiver.TotalBytes)
			}
			if st.Sender.Side == st.Receiver.Side {
				t.Errorf("stream %d: sender and receiver both on %s", st.ID, st.Sender.Side)
			}
		}
		if streamBytes != s.Bytes {
			t.Errorf("%s: streams sum to %d bytes, summary says %d", d.Direction, streamBytes, s.Bytes)
		}
		var ivBytes int64
		for _, iv := range d.Intervals {
			ivBytes += iv.Bytes
		}
		if ivBytes != s.Bytes {
			t.Errorf("%s: intervals sum to %d bytes, summary says %d", d.Direction, ivBytes, s.Bytes)
		}
	}
	if math.Abs(res.Summary.BitsPerSecond-sumRate) > 1e-6*sumRate {
		t.Errorf("summary throughput %g, directions sum to %g", res.Summary.BitsPerSecond, sumRate)
	}
}

func TestBusy(t *testing.T) {
	addr := startServer(t, server.Config{})
	a := dial(t, addr)
	sp := spec.Default()
	sp.Duration = time.Second
	done := make(chan error, 1)
	go func() {
		_, err := a.Run(context.Background(), sp)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	b := dial(t, addr)
	_, err := b.Run(context.Background(), sp)
	if !errors.Is(err, control.ErrBusy) {
		t.Errorf("second client got %v, want busy", err)
	}
	if err := <-done; err != nil {
		t.Errorf("first client: %v", err)
	}
}
