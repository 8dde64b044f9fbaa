package units

import (
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "131072", want: 131072},
		{in: "128K", want: 131072},
		{in: "128k", want: 131072},
		{in: "128KiB", want: 131072},
		{in: "1M", want: 1 << 20},
		{in: "1MB", want: 1 << 20},
		{in: "1.5K", want: 1536},
		{in: "2G", want: 2 << 30},
		{in: "0", want: 0},
		{in: "-1", wantErr: true},
		{in: "-128K", wantErr: true},
		{in: "1.3", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "", wantErr: true},
		{in: "12Q", wantErr: true},
		{in: "K", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseBytes(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{in: "500M", want: 500e6},
		{in: "2G", want: 2e9},
		{in: "1gbit", want: 1e9},
		{in: "100Mbit/s", want: 100e6},
		{in: "10kbps", want: 10e3},
		{in: "1000", want: 1000},
		{in: "0", want: 0},
		{in: "-1M", wantErr: true},
		{in: "fast", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseRate(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseRate(%q) = %g, want %g", tt.in, got, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "60", want: 60 * time.Second},
		{in: "0.5", want: 500 * time.Millisecond},
		{in: "2s", want: 2 * time.Second},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "1m", want: time.Minute},
		{in: "-3", wantErr: true},
		{in: "-3s", wantErr: true},
		{in: "ten", wantErr: true},
		{in: "", wantErr: true},
		{in: "1e300", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseDuration(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{FormatBytes(1.12 * (1 << 30)), "1.12 GBytes"},
		{FormatBytes(512), "512 Bytes"},
		{FormatBytes(1536), "1.50 KBytes"},
		{FormatBytes(3 << 20), "3.00 MBytes"},
		{FormatBits(9.62e9), "9.62 Gbits/sec"},
		{FormatBits(100e6), "100 Mbits/sec"},
		{FormatBits(48.449e9), "48.4 Gbits/sec"},
		{FormatBytes(976.45 * (1 << 20)), "976 MBytes"},
		{FormatBytes(9.999 * (1 << 20)), "10.0 MBytes"},
		{FormatBits(0), "0 bits/sec"},
		{FormatBits(2.5e3), "2.50 Kbits/sec"},
		// The part in the whole's unit, the largest where it is 10 or more.
		{FormatBitsOf(5.42467e8, 2e9), "542 of 2000 Mbits/sec"},
		{FormatBitsOf(47.6e6, 50e6), "47.6 of 50.0 Mbits/sec"},
		{FormatBitsOf(94.9e9, 100e9), "94.9 of 100 Gbits/sec"},
		{FormatBitsOf(3e3, 8e3), "3000 of 8000 bits/sec"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
