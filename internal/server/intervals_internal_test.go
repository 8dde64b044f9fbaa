package server

import (
	"testing"
	"time"
	"unsafe"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestIntervalMemory: what a test's interval records cost, worked out by
// hand from its length, interval, streams and directions.
func TestIntervalMemory(t *testing.T) {
	mk := func(kind spec.Kind, p int, iv, l time.Duration) spec.Test {
		s := spec.Default()
		s.Kind, s.Parallel, s.Interval, s.Duration = kind, p, iv, l
		return s
	}
	tests := []struct {
		name     string
		t        spec.Test
		streamed bool
		want     int64
	}{
		// 6,000 intervals, 32 streams and the sum, two directions.
		{"TCP_BIDIR -P 32 -i 0.01 -l 60, kept", mk(spec.TCPBidir, 32, 10*time.Millisecond, time.Minute), false, 6000 * 33 * 2 * intervalRecord},
		// A queue of 5 s of reports: 500.
		{"TCP_BIDIR -P 32 -i 0.01 -l 60, streamed", mk(spec.TCPBidir, 32, 10*time.Millisecond, time.Minute), true, 500 * 33 * 2 * intervalRecord},
		// 10 intervals, fewer than the queue's least (16).
		{"TCP_STREAM -i 1 -l 10, streamed", mk(spec.TCPStream, 1, time.Second, 10*time.Second), true, 10 * 2 * intervalRecord},
		// 2.5 s in intervals of 1 s: three reports, the last shorter.
		{"TCP_STREAM -i 1 -l 2.5, kept", mk(spec.TCPStream, 1, time.Second, 2500*time.Millisecond), false, 3 * 2 * intervalRecord},
		{"no intervals", mk(spec.TCPBidir, 32, 0, time.Minute), false, 0},
	}
	for _, tt := range tests {
		if got := intervalMemory(tt.t, tt.streamed); got != tt.want {
			t.Errorf("%s: %d bytes, want %d", tt.name, got, tt.want)
		}
	}
}

// TestIntervalRecordCoversTheStructs: the budget's figure for a record
// is at least twice the structs it stands for (a slice grows by doubling).
func TestIntervalRecordCoversTheStructs(t *testing.T) {
	for name, size := range map[string]uintptr{
		"result.Interval":       unsafe.Sizeof(result.Interval{}),
		"result.StreamInterval": unsafe.Sizeof(result.StreamInterval{}),
	} {
		if 2*size > intervalRecord {
			t.Errorf("%s is %d bytes: intervalRecord (%d) is under twice that", name, size, intervalRecord)
		}
	}
}
