package lab

import (
	"strings"
	"testing"
	"time"
)

// TestQueueSize: the tbf a queue asks for, each figure worked out by
// hand from tc-tbf's rule (limit = rate × latency + burst) or TBF's.
func TestQueueSize(t *testing.T) {
	tests := []struct {
		name         string
		bps          uint64
		mtu          int
		q            Queue
		rate         uint64
		burst, limit uint32
		wantErr      string
	}{
		// The cookbook's bufferbloat tbf: 20 Mbit/s is 2,500,000 B/s;
		// 100 ms of it is 250,000 bytes, and the 16 KiB bucket 16,384
		// more: tc's limit for `rate 20mbit burst 16kb latency 100ms`.
		{name: "latency and burst", bps: 20e6, mtu: 1500, q: Queue{Latency: 100 * time.Millisecond, BurstBytes: 16 << 10},
			rate: 2_500_000, burst: 16_384, limit: 266_384},
		// TBF's bucket at 20 Mbit/s: 2,500,000/250 = 10,000; + 250,000.
		{name: "latency", bps: 20e6, mtu: 1500, q: Queue{Latency: 100 * time.Millisecond},
			rate: 2_500_000, burst: 10_000, limit: 260_000},
		// 1 Mbit/s: 125,000 B/s, 1 ms is 125 bytes; the bucket is two
		// frames, 2 × (1500 + 64) = 3,128, over 125,000/250 = 500.
		{name: "small latency", bps: 1e6, mtu: 0, q: Queue{Latency: time.Millisecond},
			rate: 125_000, burst: 3_128, limit: 3_253},
		// A limit in bytes is taken as it is; the bucket stays TBF's,
		// 12,500,000/250 = 50,000.
		{name: "limit", bps: 100e6, mtu: 1500, q: Queue{LimitBytes: 64 << 10},
			rate: 12_500_000, burst: 50_000, limit: 65_536},
		// A bucket alone keeps TBF's 5 ms beyond it: 16,384 + 12,500.
		{name: "burst", bps: 20e6, mtu: 1500, q: Queue{BurstBytes: 16 << 10},
			rate: 2_500_000, burst: 16_384, limit: 28_884},
		{name: "zero", bps: 20e6, mtu: 1500, rate: 2_500_000, burst: 10_000, limit: 22_500},
		{name: "both", bps: 20e6, q: Queue{Latency: time.Millisecond, LimitBytes: 1 << 20}, wantErr: "not both"},
		// One 9000-byte frame and its header: 9,064 bytes.
		{name: "limit under a frame", bps: 20e6, mtu: 9000, q: Queue{LimitBytes: 9000}, wantErr: "use 9064 bytes or more"},
		{name: "burst under a frame", bps: 20e6, mtu: 1500, q: Queue{BurstBytes: 1000}, wantErr: "use 1564 bytes or more"},
		// 10 Tbit/s for 10 s is 12.5 TB: beyond tbf's 32-bit limit.
		{name: "beyond 32 bits", bps: 10e12, mtu: 1500, q: Queue{Latency: 10 * time.Second}, wantErr: "beyond tbf's 4 GBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate, burst, limit, err := tt.q.Size(tt.bps, tt.mtu)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Size = %d, %d, %d, %v; want an error containing %q", rate, burst, limit, err, tt.wantErr)
				}
				return
			}
			if err != nil || rate != tt.rate || burst != tt.burst || limit != tt.limit {
				t.Errorf("Size = %d, %d, %d, %v; want %d, %d, %d", rate, burst, limit, err, tt.rate, tt.burst, tt.limit)
			}
		})
	}
}

// TestConfigQueueChecks: a queue needs a rate, and one-way shaping a side.
func TestConfigQueueChecks(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "queue without rate", cfg: Config{Queue: Queue{Latency: time.Second}}, wantErr: "needs its rate"},
		{name: "one way c", cfg: Config{RateBitsPerSecond: 1e6, OneWay: "c"}, wantErr: "side a or b"},
		{name: "bad queue", cfg: Config{RateBitsPerSecond: 1e6, Queue: Queue{LimitBytes: 10}}, wantErr: "no full frame"},
	} {
		if _, err := tt.cfg.withDefaults(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.wantErr)
		}
	}
	mesh := MeshConfig{Queue: Queue{Latency: time.Second}}
	if _, err := mesh.withDefaults(); err == nil || !strings.Contains(err.Error(), "needs its rate") {
		t.Errorf("a mesh queue without a rate: %v", err)
	}
}
