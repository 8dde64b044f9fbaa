package iperf3

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/spec"
)

// Seen from iperf3 3.12's client on the wire.
const (
	params312TCP  = `{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.12"}`
	params312UDP  = `{"udp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":32768,"bandwidth":10000000,"pacing_timer":1000,"client_version":"3.12"}`
	params312Bidi = `{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":2,"bidirectional":true,"len":131072,"pacing_timer":1000,"client_version":"3.12"}`
)

func TestParseParams(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Params
		wantErr string
	}{
		{name: "tcp 3.12", in: params312TCP, want: Params{TCP: true, Time: 1, Parallel: 1, Len: 131072, PacingTimer: 1000, ClientVersion: "3.12"}},
		{name: "udp 3.12", in: params312UDP, want: Params{UDP: true, Time: 1, Parallel: 1, Len: 32768, Bandwidth: 10000000, PacingTimer: 1000, ClientVersion: "3.12"}},
		{name: "bidir 3.12", in: params312Bidi, want: Params{TCP: true, Time: 1, Parallel: 2, Bidirectional: true, Len: 131072, PacingTimer: 1000, ClientVersion: "3.12"}},
		{name: "flags as numbers", in: `{"tcp":1,"time":1,"reverse":1,"udp_counters_64bit":0}`, want: Params{TCP: true, Time: 1, Parallel: 1, Reverse: true}},
		{name: "unknown fields ignored", in: `{"tcp":true,"time":2,"future":{"x":[1,2]},"gso":1}`, want: Params{TCP: true, Time: 2, Parallel: 1}},

		{name: "parallel string", in: `{"tcp":true,"time":1,"parallel":"x"}`, wantErr: `"parallel" is "x", not an integer`},
		{name: "parallel fraction", in: `{"tcp":true,"time":1,"parallel":1.5}`, wantErr: `"parallel" is 1.5, not a 64-bit integer`},
		{name: "parallel negative", in: `{"tcp":true,"time":1,"parallel":-1}`, wantErr: `"parallel" is -1, outside 1..128`},
		{name: "parallel huge", in: `{"tcp":true,"time":1,"parallel":99999999999999999999999}`, wantErr: "not a 64-bit integer"},
		{name: "parallel 2^64-1", in: `{"tcp":true,"time":1,"parallel":18446744073709551615}`, wantErr: `"parallel" is -1, outside`},
		{name: "parallel too many", in: `{"tcp":true,"time":1,"parallel":129}`, wantErr: "outside 1..128"},
		{name: "parallel null", in: `{"tcp":true,"time":1,"parallel":null}`, wantErr: "not an integer"},
		{name: "parallel exponent", in: `{"tcp":true,"time":1,"parallel":1e2}`, wantErr: "not a 64-bit integer"},
		{name: "time negative", in: `{"tcp":true,"time":-5}`, wantErr: `"time" is -5`},
		{name: "time huge", in: `{"tcp":true,"time":4294967296}`, wantErr: `"time" is 4294967296, outside`},
		{name: "len zero", in: `{"tcp":true,"time":1,"len":0}`, wantErr: `"len" is 0, outside`},
		{name: "len huge", in: `{"tcp":true,"time":1,"len":2147483648}`, wantErr: `"len" is 2147483648`},
		{name: "bandwidth negative", in: `{"udp":true,"time":1,"bandwidth":-1}`, wantErr: `"bandwidth" is -1`},
		{name: "tcp string", in: `{"tcp":"true","time":1}`, wantErr: `"tcp" is "true", not true or false`},
		{name: "tcp two", in: `{"tcp":2,"time":1}`, wantErr: `"tcp" is 2, not true or false`},
		{name: "title number", in: `{"tcp":true,"time":1,"title":5}`, wantErr: `"title" is 5, not a string`},
		{name: "title too long", in: `{"tcp":true,"time":1,"title":"` + strings.Repeat("a", 4097) + `"}`, wantErr: "more than 4096"},
		{name: "congestion shell", in: `{"tcp":true,"time":1,"congestion":"; rm -rf"}`, wantErr: "not a kernel algorithm name"},
		{name: "neither tcp nor udp", in: `{"time":1}`, wantErr: "exactly one of tcp and udp"},
		{name: "both tcp and udp", in: `{"tcp":true,"udp":true,"time":1}`, wantErr: "exactly one of tcp and udp"},
		{name: "reverse and bidir", in: `{"tcp":true,"time":1,"reverse":true,"bidirectional":true}`, wantErr: "both reverse and bidirectional"},
		{name: "array", in: `[1,2]`, wantErr: "not a JSON object"},
		{name: "null", in: `null`, wantErr: "null, not a JSON object"},
		{name: "trailing data", in: `{"tcp":true,"time":1}{}`, wantErr: "data after"},
		{name: "truncated", in: `{"tcp":true,"time":`, wantErr: "not a JSON object"},
		{name: "empty", in: ``, wantErr: "not a JSON object"},
		{name: "oversize", in: `{"tcp":true,"time":1,"x":"` + strings.Repeat("a", MaxParamsLen) + `"}`, wantErr: "more than 8192"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseParams([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseParams(%.60s) error %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				if !errors.Is(err, ErrProtocol) {
					t.Errorf("error %v is not ErrProtocol", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseParams: %v", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseParams (-want +got):\n%s", d)
			}
		})
	}
}

func TestParamsRoundTrip(t *testing.T) {
	p := Params{UDP: true, Omit: 1, Time: 3, Parallel: 4, Reverse: true, Len: 1472, Bandwidth: 50e6, Window: 1 << 20, PacingTimer: 1000}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseParams(b)
	if err != nil {
		t.Fatalf("ParseParams(%s): %v", b, err)
	}
	if d := cmp.Diff(p, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestCookie(t *testing.T) {
	c := NewCookie()
	if _, err := ParseCookie(c[:]); err != nil {
		t.Fatalf("NewCookie %q does not parse: %v", c[:], err)
	}
	for _, b := range []string{"WSPD", "WSDT", "GET ", "SSH-", "\x16\x03\x01\x02"} {
		if LooksLikeCookie([]byte(b)) {
			t.Errorf("LooksLikeCookie(%q) = true", b)
		}
	}
	if !LooksLikeCookie([]byte("3xxr")) {
		t.Error("LooksLikeCookie(3xxr) = false")
	}
	bad := append([]byte(nil), c[:]...)
	bad[CookieLen-1] = 'a'
	if _, err := ParseCookie(bad); err == nil {
		t.Error("a cookie without its NUL parsed")
	}
	bad = append([]byte(nil), c[:]...)
	bad[3] = '1'
	if _, err := ParseCookie(bad); err == nil {
		t.Error("a cookie with a 1 parsed")
	}
}

// TestCheckTestUnsupported checks that a test iperf3 cannot run is
// refused with an error callers can test for.
func TestCheckTestUnsupported(t *testing.T) {
	err := CheckTest(spec.Test{Kind: spec.TCPRR})
	if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
		t.Errorf("CheckTest(TCP_RR) = %v, want an error matching errors.ErrUnsupported and ErrUnsupported", err)
	}
	if err := CheckTest(spec.Test{Kind: spec.TCPStream}); err != nil {
		t.Errorf("CheckTest(TCP_STREAM) = %v, want nil", err)
	}
}
