package units

import (
	"fmt"
	"math"
)

// RateUnit is the unit rates are shown in, iperf3's and netperf's -f:
// k, m, g, t are 10^3, 10^6, 10^9, 10^12 bits/s; K, M, G, T are 2^10,
// 2^20, 2^30, 2^40 bytes/s. The zero value is each place's default:
// netperf's 10^6bits/sec in tables, iperf's adaptive bits in interval
// lines.
type RateUnit byte

// ParseRateUnit reads a -f value: one of k m g t K M G T.
func ParseRateUnit(s string) (RateUnit, error) {
	if len(s) == 1 {
		switch c := s[0]; c {
		case 'k', 'm', 'g', 't', 'K', 'M', 'G', 'T':
			return RateUnit(c), nil
		}
	}
	return 0, fmt.Errorf("format %q: one of k, m, g, t (Kbits/s, Mbits/s, Gbits/s, Tbits/s) or K, M, G, T (KBytes/s, MBytes/s, ... in 1024s), as iperf3's -f", s)
}

// String is the letter, "" for the default.
func (u RateUnit) String() string {
	if u == 0 {
		return ""
	}
	return string(rune(u))
}

// Bytes reports whether u shows bytes per second.
func (u RateUnit) Bytes() bool { return u >= 'A' && u <= 'Z' }

// divisor is what a rate in bits/s is divided by in unit u; the default
// is 10^6 bits/s.
func (u RateUnit) divisor() float64 {
	switch u {
	case 'k':
		return 1e3
	case 'g':
		return 1e9
	case 't':
		return 1e12
	case 'K':
		return 8 * 1024
	case 'M':
		return 8 * 1024 * 1024
	case 'G':
		return 8 * 1024 * 1024 * 1024
	case 'T':
		return 8 * 1024 * 1024 * 1024 * 1024
	}
	return 1e6
}

// Scale returns bps in unit u: Mega(bps) for the default and 'm'.
func (u RateUnit) Scale(bps float64) float64 { return bps / u.divisor() }

// Column is a table's heading for unit u, netperf's way: "10^6bits/sec"
// (the default and m), "10^9bits/sec", "MBytes/sec".
func (u RateUnit) Column() string {
	switch u {
	case 'k':
		return "10^3bits/sec"
	case 'g':
		return "10^9bits/sec"
	case 't':
		return "10^12bits/sec"
	case 'K', 'M', 'G', 'T':
		return string(rune(u)) + "Bytes/sec"
	}
	return "10^6bits/sec"
}

// Format writes bps in unit u iperf's way, "941 Mbits/sec" or "112
// MBytes/sec"; the default is FormatBits, adaptive.
func (u RateUnit) Format(bps float64) string {
	if u == 0 {
		return FormatBits(bps)
	}
	v := u.Scale(bps)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("%v %s", v, u.label())
	}
	return sig3(v) + " " + u.label()
}

func (u RateUnit) label() string {
	if u.Bytes() {
		return string(rune(u)) + "Bytes/sec"
	}
	return string(rune(u-'a'+'A')) + "bits/sec"
}
