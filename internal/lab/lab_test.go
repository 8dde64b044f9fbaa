package lab

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestConfigChecks(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "bad name", cfg: Config{Name: "Bad_Name"}, wantErr: "lowercase letters"},
		{name: "long name", cfg: Config{Name: strings.Repeat("x", 33)}, wantErr: "1 to 32"},
		{name: "public v4", cfg: Config{IPv4: netip.MustParsePrefix("8.8.8.0/24")}, wantErr: "private subnet"},
		{name: "v4 too narrow", cfg: Config{IPv4: netip.MustParsePrefix("10.1.1.0/31")}, wantErr: "/30 or wider"},
		{name: "v6 global", cfg: Config{IPv6: netip.MustParsePrefix("2001:db8::/64")}, wantErr: "unique local"},
		{name: "v6 in v4 slot", cfg: Config{IPv4: netip.MustParsePrefix("fd00::/64")}, wantErr: "private subnet"},
		{name: "mtu too small", cfg: Config{MTU: 576}, wantErr: "1280"},
		{name: "mtu too big", cfg: Config{MTU: 70000}, wantErr: "65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.cfg.withDefaults()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Config{IPv4: netip.MustParsePrefix("192.168.7.9/24")}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "lab" || cfg.IPv4.String() != "192.168.7.0/24" || cfg.IPv6 != DefaultIPv6 {
		t.Errorf("defaults: %+v", cfg)
	}
	a, b := hostAddrs(cfg.IPv4)
	if a.String() != "192.168.7.1" || b.String() != "192.168.7.2" {
		t.Errorf("host addresses %s %s", a, b)
	}
	a, b = hostAddrs(DefaultIPv6)
	if a.String() != "fd00:77::1" || b.String() != "fd00:77::2" {
		t.Errorf("host addresses %s %s", a, b)
	}
}

func TestTBF(t *testing.T) {
	tests := []struct {
		bps          uint64
		mtu          int
		rate         uint64
		burst, limit uint32
	}{
		// 1 Gbit/s: 125e6 B/s; burst 125e6/250 = 500000; limit + 625000.
		{bps: 1e9, mtu: 1500, rate: 125000000, burst: 500000, limit: 1125000},
		// 10 Mbit/s: 1.25e6 B/s; 5000 beats 2*(1500+64) = 3128; limit + 6250.
		{bps: 10e6, mtu: 1500, rate: 1250000, burst: 5000, limit: 11250},
		// 1 Mbit/s with jumbo frames: two frames, 2*(9000+64) = 18128, beat 500.
		{bps: 1e6, mtu: 9000, rate: 125000, burst: 18128, limit: 18753},
		// 0 MTU means 1500.
		{bps: 8000, mtu: 0, rate: 1000, burst: 3128, limit: 3133},
		// 10 Tbit/s clamps at the 32-bit fields.
		{bps: 10e12, mtu: 1500, rate: 1250000000000, burst: 1<<32 - 1, limit: 1<<32 - 1},
	}
	for _, tt := range tests {
		rate, burst, limit := TBF(tt.bps, tt.mtu)
		if rate != tt.rate || burst != tt.burst || limit != tt.limit {
			t.Errorf("TBF(%d, %d) = %d, %d, %d; want %d, %d, %d", tt.bps, tt.mtu, rate, burst, limit, tt.rate, tt.burst, tt.limit)
		}
	}
}

func TestParseHostName(t *testing.T) {
	for in, want := range map[string]HostName{"a": A, "b": B} {
		if got, err := ParseHostName(in); err != nil || got != want {
			t.Errorf("ParseHostName(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseHostName("c"); err == nil {
		t.Error("ParseHostName(c) gave no error")
	}
	if !errors.Is(ErrNotFound, ErrNotFound) || Namespace("x", B) != "wst-x-b" || Device(A) != "wst-a" {
		t.Error("names")
	}
}

// TestErrUnsupported checks that a caller can test what the package
// returns for errors.ErrUnsupported as well as for ErrUnsupported.
func TestErrUnsupported(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", ErrUnsupported)
	if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
		t.Errorf("%v: want it to match errors.ErrUnsupported and ErrUnsupported", err)
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{in: "100mbit", want: 100_000_000},
		{in: "1G", want: 1_000_000_000},
		{in: "8kbit", want: 8000},
		{in: "7999", wantErr: "use 8kbit or more"},
		{in: "fast", wantErr: "not a number"},
	} {
		got, err := ParseRate(tc.in)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseRate(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("ParseRate(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// TestServeArgs: the server lab up starts listens on every address on
// the port, requires the key and allows netconf.
func TestServeArgs(t *testing.T) {
	got := strings.Join(ServeArgs(7575, "/run/k"), " ")
	if want := "serve --listen :7575 --log-level info --psk-file /run/k --allow-netconf"; got != want {
		t.Errorf("ServeArgs = %q, want %q", got, want)
	}
}
