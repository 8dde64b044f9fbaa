package main

import (
	"net/netip"
	"testing"
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
