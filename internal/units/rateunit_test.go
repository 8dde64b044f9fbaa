package units

import "testing"

// TestRateUnit: each -f letter against values worked out by hand:
// 1e9 bits/s is 1,000,000 Kbits/s, 1000 Mbits/s, 1 Gbits/s; in bytes it
// is 125,000,000 bytes/s = 122070.3125 KBytes/s = 119.2093 MBytes/s =
// 0.116415 GBytes/s.
func TestRateUnit(t *testing.T) {
	const bps = 1e9
	for _, tt := range []struct {
		u      string
		scale  float64
		format string
		column string
	}{
		{"k", 1e6, "1000000 Kbits/sec", "10^3bits/sec"},
		{"m", 1000, "1000 Mbits/sec", "10^6bits/sec"},
		{"g", 1, "1.00 Gbits/sec", "10^9bits/sec"},
		{"t", 0.001, "0.00 Tbits/sec", "10^12bits/sec"},
		{"K", 122070.3125, "122070 KBytes/sec", "KBytes/sec"},
		{"M", 119.20928955078125, "119 MBytes/sec", "MBytes/sec"},
		{"G", 0.11641532182693481, "0.12 GBytes/sec", "GBytes/sec"},
	} {
		u, err := ParseRateUnit(tt.u)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Scale(bps); got != tt.scale {
			t.Errorf("%s: Scale = %v, want %v", tt.u, got, tt.scale)
		}
		if got := u.Format(bps); got != tt.format {
			t.Errorf("%s: Format = %q, want %q", tt.u, got, tt.format)
		}
		if got := u.Column(); got != tt.column {
			t.Errorf("%s: Column = %q, want %q", tt.u, got, tt.column)
		}
	}
	var def RateUnit
	if def.Scale(bps) != Mega(bps) || def.Format(bps) != FormatBits(bps) || def.Column() != "10^6bits/sec" {
		t.Errorf("the default unit is not netperf's table unit and iperf's adaptive lines")
	}
	for _, bad := range []string{"", "x", "mm", "a", "b"} {
		if _, err := ParseRateUnit(bad); err == nil {
			t.Errorf("ParseRateUnit(%q) accepted", bad)
		}
	}
}
