// Package units owns the scaling of numbers between people and programs:
// parsing sizes ("128K"), rates ("500M") and durations ("60", "2s"), and
// formatting bytes and bits with SI or IEC prefixes.
//
// Conventions follow the tools network engineers already use: sizes in
// flags are binary (iperf's -l 128K and netperf's -m 128K are 131072 bytes),
// rates are decimal (iperf's -b 500M is 500,000,000 bits/s), transfer
// amounts are shown in binary units ("1.12 GBytes" is 1.12*2^30 bytes) and
// bit rates in decimal ones ("9.62 Gbits/sec" is 9.62*10^9 bits/s).
package units

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseBytes parses a byte count: plain digits ("131072") or digits with a
// binary suffix K, M, G or T (case-insensitive, an optional trailing "B" or
// "iB" allowed): "128K" is 131072. Negative and fractional-byte values are
// errors.
func ParseBytes(s string) (int64, error) {
	num, mult, err := splitSuffix(s, 1024)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a size: use bytes like 131072 or 128K", s)
	}
	b := v * mult
	if b > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	if b != math.Trunc(b) {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	return int64(b), nil
}

// ParseRate parses a rate in bits per second with a decimal suffix K, M, G
// or T (case-insensitive): "500M" is 5e8. Plain numbers are bits/s.
func ParseRate(s string) (float64, error) {
	num, mult, err := splitSuffix(s, 1000)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a rate: use bits/s like 500M or 2G", s)
	}
	return v * mult, nil
}

// numberRe splits a value into its number, its prefix letter and an
// optional unit word ("128KiB", "500Mbit/s", "2G").
var numberRe = regexp.MustCompile(`^([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmgt]?)(i?b|bytes?|bits?(?:/s(?:ec)?)?|bps)?$`)

func splitSuffix(s string, base float64) (num string, mult float64, err error) {
	if strings.HasPrefix(strings.TrimSpace(s), "-") {
		return "", 0, fmt.Errorf("%q is negative: use 0 or more", s)
	}
	m := numberRe.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return "", 0, fmt.Errorf("%q is not a number with an optional K, M, G or T suffix", s)
	}
	mult = 1
	for _, p := range "kmgt" {
		mult *= base
		if m[2] == string(p) {
			return m[1], mult, nil
		}
	}
	return m[1], 1, nil
}

// ParseDuration parses a duration the way netperf and Go both write them:
// plain seconds ("60", "0.5") or a Go duration ("2s", "500ms", "1m").
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e9 {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		if v < 0 {
			return 0, fmt.Errorf("%q is negative: a duration must be 0 or more", s)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: use seconds like 10 or a duration like 2s, 500ms, 1m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: a duration must be 0 or more", s)
	}
	return d, nil
}

// FormatBytes formats a byte count with binary prefixes and iperf's labels
// and precision (three significant digits): "1.12 GBytes" for 1.12*2^30
// bytes, "976 MBytes", "512 Bytes".
func FormatBytes(b float64) string {
	const k = 1024
	switch a := math.Abs(b); {
	case a >= k*k*k*k:
		return sig3(b/(k*k*k*k)) + " TBytes"
	case a >= k*k*k:
		return sig3(b/(k*k*k)) + " GBytes"
	case a >= k*k:
		return sig3(b/(k*k)) + " MBytes"
	case a >= k:
		return sig3(b/k) + " KBytes"
	default:
		return fmt.Sprintf("%.0f Bytes", b)
	}
}

// FormatBits formats a rate in bits per second with decimal prefixes and
// iperf's labels and precision: "9.62 Gbits/sec", "48.4 Gbits/sec".
func FormatBits(bps float64) string {
	switch a := math.Abs(bps); {
	case a >= 1e12:
		return sig3(bps/1e12) + " Tbits/sec"
	case a >= 1e9:
		return sig3(bps/1e9) + " Gbits/sec"
	case a >= 1e6:
		return sig3(bps/1e6) + " Mbits/sec"
	case a >= 1e3:
		return sig3(bps/1e3) + " Kbits/sec"
	default:
		return fmt.Sprintf("%.0f bits/sec", bps)
	}
}

// FormatBitsOf writes a part of a rate and the whole in one unit, the
// largest in which the whole is at least 10, each with iperf's
// precision: "542 of 2000 Mbits/sec" for 5.42467e8 of 2e9 bits/s, "47.6
// of 50.0 Mbits/sec".
func FormatBitsOf(part, whole float64) string {
	for _, p := range []struct {
		div   float64
		label string
	}{{1e12, "Tbits/sec"}, {1e9, "Gbits/sec"}, {1e6, "Mbits/sec"}, {1e3, "Kbits/sec"}} {
		if math.Abs(whole)/p.div >= 10 {
			return sig3(part/p.div) + " of " + sig3(whole/p.div) + " " + p.label
		}
	}
	return fmt.Sprintf("%.0f of %.0f bits/sec", part, whole)
}

// sig3 writes v with iperf's precision: two decimals below 10, one below
// 100, none above.
func sig3(v float64) string {
	switch a := math.Abs(v); {
	case a < 9.995:
		return fmt.Sprintf("%.2f", v)
	case a < 99.95:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// Mega returns bits/s in netperf's unit, 10^6 bits/s.
func Mega(bps float64) float64 { return bps / 1e6 }

// FormatSize writes a byte count the way ParseBytes reads it back: with
// the largest binary suffix that divides it exactly ("128K", "1M", "1500").
func FormatSize(b int64) string {
	for _, p := range []struct {
		suffix string
		n      int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b != 0 && b%p.n == 0 {
			return strconv.FormatInt(b/p.n, 10) + p.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}
