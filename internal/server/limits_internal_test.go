package server

import (
	"net/netip"
	"testing"
	"time"

	"wirespeed/internal/iperf3"
	"wirespeed/internal/spec"
)

// TestAddrKey: IPv4 addresses count one by one, IPv6 addresses by /64,
// and an IPv4-mapped IPv6 address as its IPv4 address.
func TestAddrKey(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"::ffff:192.0.2.1", "192.0.2.1", true},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
	}
	for _, tt := range tests {
		ka, kb := addrKey(netip.MustParseAddr(tt.a)), addrKey(netip.MustParseAddr(tt.b))
		if (ka == kb) != tt.same {
			t.Errorf("addrKey(%s) = %v, addrKey(%s) = %v; same = %v, want %v", tt.a, ka, tt.b, kb, ka == kb, tt.same)
		}
	}
	if got := addrKeyString(netip.MustParseAddr("2001:db8:1:2::7")); got != "2001:db8:1:2::/64" {
		t.Errorf("addrKeyString = %q, want the /64", got)
	}
}

// TestHandshakeRateBucket: a burst of twice the rate, then one token per
// 1/rate seconds; another key has its own bucket; a full table forgets
// refilled buckets before it refuses.
func TestHandshakeRateBucket(t *testing.T) {
	var h handshakeRate
	a, b := addrKey(netip.MustParseAddr("2001:db8::1")), addrKey(netip.MustParseAddr("2001:db8:0:1::1"))
	now := time.Unix(1000, 0)
	for i := range 20 {
		if !h.take(a, 10, now) {
			t.Fatalf("token %d of a burst of 20 refused", i+1)
		}
	}
	if h.take(a, 10, now) {
		t.Fatal("21st token at once granted")
	}
	if !h.take(b, 10, now) {
		t.Fatal("another /64 refused")
	}
	if !h.take(a, 10, now.Add(100*time.Millisecond)) || h.take(a, 10, now.Add(100*time.Millisecond)) {
		t.Fatal("after 100 ms at 10/s: want exactly one token back")
	}
	// A full table: refilled buckets are forgotten to make room.
	for i := range maxBuckets {
		h.take(addrKey(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})), 10, now)
	}
	if !h.take(addrKey(netip.MustParseAddr("192.0.2.9")), 10, now.Add(time.Minute)) {
		t.Error("a new address refused although the table's buckets had refilled")
	}
	if len(h.buckets) > maxBuckets {
		t.Errorf("%d buckets, over the bound of %d", len(h.buckets), maxBuckets)
	}
}

// TestTestMemory: the buffers a test makes the server allocate, worked
// out by hand from what the engine's loops allocate.
func TestTestMemory(t *testing.T) {
	mk := func(k spec.Kind, p int, f func(*spec.Test)) spec.Test {
		sp := spec.Default()
		sp.Kind, sp.Parallel = k, p
		if f != nil {
			f(&sp)
		}
		return sp
	}
	tests := []struct {
		name string
		t    spec.Test
		want int64
	}{
		{"TCP_STREAM -P 32 -M 64M: 32 receive buffers", mk(spec.TCPStream, 32, func(s *spec.Test) { s.RecvSize = 64 << 20 }), 32 * 64 << 20},
		{"TCP_MAERTS -P 2 -m 1M: one random payload", mk(spec.TCPMaerts, 2, func(s *spec.Test) { s.SendSize = 1 << 20 }), 68<<10 + 1<<20},
		{"TCP_BIDIR -P 1, default sizes", mk(spec.TCPBidir, 1, nil), 128<<10 + 68<<10 + 128<<10},
		// A random ring of four messages, at least 64 KiB.
		{"UDP_STREAM -R -P 2 -m 1472: batches and payload", mk(spec.UDPStream, 2, func(s *spec.Test) { s.Reverse, s.SendSize = true, 1472 }), 2*64*1472 + 64<<10 + 1472},
		// One datagram and its control buffer (64 bytes) a call.
		// and the ring of sequence numbers seen, 128 KiB.
		{"UDP_STREAM -P 2 -m 1472", mk(spec.UDPStream, 2, func(s *spec.Test) { s.SendSize = 1472 }), 2 * (1472 + 64 + 128<<10)},
		// Issue 32: 32 streams of 64 buffers of 64 KiB, counted as 32 KiB.
		{"UDP_STREAM -m 16 --gro --recv-batch 64 -P 32", mk(spec.UDPStream, 32, func(s *spec.Test) { s.SendSize, s.GRO, s.RecvBatch = 16, true, 64 }), 32 * (64*(64<<10+64) + 128<<10)},
		// Issue 32: a memfd of the payload per stream, besides the payload.
		{"TCP_MAERTS -P 32 -m 32M --zerocopy sendfile", mk(spec.TCPMaerts, 32, func(s *spec.Test) { s.SendSize, s.ZeroCopy = 32<<20, spec.ZeroCopySendfile }), 33 * (68<<10 + 32<<20)},
		// A pipe of 1 MiB per stream.
		{"TCP_STREAM -P 4 --rx splice", mk(spec.TCPStream, 4, func(s *spec.Test) { s.Rx = spec.RxSplice }), 4 * (128<<10 + 1<<20)},
		{"UDP_RR -P 4 -r 1,65000", mk(spec.UDPRR, 4, func(s *spec.Test) { s.RequestSize, s.ResponseSize = 1, 65000 }), 4 * (64<<10 + 65000)},
		{"TCP_CRR -r 100,200", mk(spec.TCPCRR, 1, func(s *spec.Test) { s.RequestSize, s.ResponseSize = 100, 200 }), 300},
	}
	for _, tt := range tests {
		if got := testMemory(tt.t, 0); got != tt.want {
			t.Errorf("%s: %d bytes, want %d", tt.name, got, tt.want)
		}
	}
	p := iperf3.Params{TCP: true, Parallel: 32, Len: 64 << 20}
	if got, want := iperf3Memory(p), int64(32*64<<20); got != want {
		t.Errorf("iperf3 -P 32 -l 64M: %d bytes, want %d", got, want)
	}
	p = iperf3.Params{TCP: true, Parallel: 2, Bidirectional: true, Len: 1 << 20}
	if got, want := iperf3Memory(p), int64(2*1<<20+68<<10+1<<20); got != want {
		t.Errorf("iperf3 -P 2 --bidir -l 1M: %d bytes, want %d", got, want)
	}
}
