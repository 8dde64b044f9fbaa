package main

import (
	"math"
	"net/netip"
	"testing"
	"time"
)

// TestParseSS reads ss -Htin's two lines per socket, summing by peer.
func TestParseSS(t *testing.T) {
	out := "0      0      10.77.0.1:7575 10.77.0.10:36521\n" +
		"\t bbr wscale:10,10 rto:200 rtt:0.012/0.006 mss:1448 bytes_received:2490392 segs_out:58 bbr:(bw:0bps,mrtt:0.012)\n" +
		"0      0      10.77.0.1:7575 10.77.0.10:58155\n" +
		"\t bbr wscale:10,10 bytes_sent:481 bytes_acked:481 bytes_received:812 segs_out:8\n" +
		"0      0      10.77.0.1:7575 10.77.0.11:40000\n" +
		"\t cubic bytes_received:5\n"
	got := parseSS(out)
	want := map[netip.Addr]int64{netip.MustParseAddr("10.77.0.10"): 2490392 + 812, netip.MustParseAddr("10.77.0.11"): 5}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for a, n := range want {
		if got[a] != n {
			t.Errorf("%s: %d, want %d", a, got[a], n)
		}
	}
}

// TestParseIperf2CSV reads iperf2's server reports: the client's address
// comes first on the server's lines.
func TestParseIperf2CSV(t *testing.T) {
	out := "19700101000000,10.77.0.10,35003,10.77.0.1,5001,1,0.0-3.0,7733308,20322806\n" +
		"not a report\n" +
		"19700101000000,10.77.0.11,35004,10.77.0.1,5001,2,0.0-3.0,7733308,19990000\n"
	got := parseIperf2CSV(out)
	if got[netip.MustParseAddr("10.77.0.10")] != 20322806 || got[netip.MustParseAddr("10.77.0.11")] != 19990000 || len(got) != 2 {
		t.Errorf("got %v", got)
	}
}

// TestCPUTime reads utime and stime after a command holding spaces and
// parentheses.
func TestCPUTime(t *testing.T) {
	d, err := cpuTime(1)
	if err != nil {
		t.Skipf("no /proc/1/stat: %v", err)
	}
	if d < 0 {
		t.Errorf("pid 1 used %v", d)
	}
}

// TestKernelRates: each client over its own span, its first and last
// growing samples and one more on each side left out; a client whose
// bytes never grew, or grew for too short a span, has none (NaN).
func TestKernelRates(t *testing.T) {
	a, b, c := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	t0 := time.Unix(1000, 0)
	var samples []ssSample
	for i := range 12 {
		got := map[netip.Addr]int64{}
		// a: from sample 1 to 10, 1000 bytes a half second (16 kbit/s),
		// with a burst at its start and its end that must not count.
		switch {
		case i == 1:
			got[a] = 50000
		case i > 1 && i <= 10:
			got[a] = 50000 + int64(i-1)*1000
		case i > 10:
			got[a] = 50000 + 9*1000 + 70000
		}
		if i == 10 {
			got[a] += 70000
		}
		// b: grows only over two samples.
		if i >= 5 {
			got[b] = int64(min(i, 6)) * 100
		}
		samples = append(samples, ssSample{at: t0.Add(time.Duration(i) * 500 * time.Millisecond), got: got})
	}
	rates, shortest := kernelRates(samples, []netip.Addr{a, b, c})
	if r := rates[a]; math.Abs(r-16000) > 1e-6 {
		t.Errorf("a: %v bit/s, want 16000", r)
	}
	if !math.IsNaN(rates[b]) || !math.IsNaN(rates[c]) {
		t.Errorf("b %v c %v: want none", rates[b], rates[c])
	}
	if shortest != 2500*time.Millisecond {
		t.Errorf("shortest span %v, want 2.5s", shortest)
	}
}
