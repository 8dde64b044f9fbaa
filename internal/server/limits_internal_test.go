package server

import (
	"net/netip"
	"testing"
	"time"
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
