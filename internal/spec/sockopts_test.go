package spec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateSockOpts(t *testing.T) {
	udp := func(t *Test) { t.Kind = UDPStream; t.SendSize = DefaultUDPSize }
	checkValidate(t, []validateCase{
		{name: "bind v4", mod: func(t *Test) { t.BindAddr = "127.0.0.2" }},
		{name: "bind v6", mod: func(t *Test) { t.BindAddr = "::1" }},
		{name: "bind name", mod: func(t *Test) { t.BindAddr = "localhost" }, wantErr: "not an IP address"},
		{name: "bind with port", mod: func(t *Test) { t.BindAddr = "127.0.0.1:5000" }, wantErr: "not an IP address"},
		{name: "bind zone", mod: func(t *Test) { t.BindAddr = "fe80::1%eth0" }, wantErr: "--bind-dev"},
		{name: "bind v6 with -4", mod: func(t *Test) { t.BindAddr = "::1"; t.IPVersion = 4 }, wantErr: "IPv4 only"},
		{name: "bind v4 with -6", mod: func(t *Test) { t.BindAddr = "127.0.0.1"; t.IPVersion = 6 }, wantErr: "IPv6 only"},
		{name: "bind-dev", mod: func(t *Test) { t.BindDev = "eth0" }},
		{name: "bind-dev long", mod: func(t *Test) { t.BindDev = "abcdefghijklmnop" }, wantErr: "not an interface name"},
		{name: "bind-dev slash", mod: func(t *Test) { t.BindDev = "a/b" }, wantErr: "not an interface name"},
		{name: "cport", mod: func(t *Test) { t.ClientPort = 5001; t.Parallel = 4 }},
		{name: "cport udp", mod: func(t *Test) { udp(t); t.ClientPort = 5001 }},
		{name: "cport crr", mod: func(t *Test) { t.Kind = TCPCRR; t.ClientPort = 5001 }, wantErr: "TCP_CRR"},
		{name: "cport range", mod: func(t *Test) { t.ClientPort = 70000 }, wantErr: "between 1 and 65535"},
		{name: "cport overflow", mod: func(t *Test) { t.Kind = TCPBidir; t.ClientPort = 65534; t.Parallel = 2 }, wantErr: "up to 65537"},
		{name: "cport last fits", mod: func(t *Test) { t.ClientPort = 65534; t.Parallel = 2 }},
		{name: "tos", mod: func(t *Test) { t.TOS = 0xb8 }},
		{name: "tos high", mod: func(t *Test) { t.TOS = 256 }, wantErr: "TOS 256"},
		{name: "mss", mod: func(t *Test) { t.MSS = 1000 }},
		{name: "mss crr", mod: func(t *Test) { t.Kind = TCPCRR; t.MSS = 536 }},
		{name: "mss low", mod: func(t *Test) { t.MSS = 87 }, wantErr: "between 88 and 32767"},
		{name: "mss high", mod: func(t *Test) { t.MSS = 32768 }, wantErr: "between 88 and 32767"},
		{name: "mss udp", mod: func(t *Test) { udp(t); t.MSS = 1000 }, wantErr: "is UDP"},
		{name: "df udp", mod: func(t *Test) { udp(t); t.DontFragment = true }},
		{name: "df udp rr", mod: func(t *Test) { t.Kind = UDPRR; t.DontFragment = true }},
		{name: "df tcp", mod: func(t *Test) { t.DontFragment = true }, wantErr: "UDP tests"},
	})
}

func TestParseDSCPAndTOS(t *testing.T) {
	// The TOS bytes of the named code points, worked out by hand from
	// RFC 2474/2597/3246: EF is 101110, shifted past the two ECN bits.
	dscp := []struct {
		in      string
		wantTOS int
		wantErr bool
	}{
		{in: "EF", wantTOS: 0xb8},
		{in: "ef", wantTOS: 0xb8},
		{in: "AF41", wantTOS: 0x88},
		{in: "CS1", wantTOS: 0x20},
		{in: "af11", wantTOS: 0x28},
		{in: "46", wantTOS: 0xb8},
		{in: "0x2e", wantTOS: 0xb8},
		{in: "63", wantTOS: 0xfc},
		{in: "64", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "AF44", wantErr: true},
	}
	for _, tt := range dscp {
		d, err := ParseDSCP(tt.in)
		if (err != nil) != tt.wantErr || !tt.wantErr && d<<2 != tt.wantTOS {
			t.Errorf("ParseDSCP(%q) = %d (tos %#x), %v; want tos %#x, error %v", tt.in, d, d<<2, err, tt.wantTOS, tt.wantErr)
		}
	}
	tos := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{in: "184", want: 184},
		{in: "0xb8", want: 184},
		{in: "0270", want: 184},
		{in: "255", want: 255},
		{in: "256", wantErr: true},
		{in: "low", wantErr: true},
	}
	for _, tt := range tos {
		got, err := ParseTOS(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseTOS(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestSockOptsJSON(t *testing.T) {
	sp := Default()
	sp.Kind, sp.SendSize = UDPStream, 1400
	sp.BindAddr, sp.BindDev, sp.ClientPort = "127.0.0.2", "lo", 6001
	sp.TOS, sp.DontFragment = 0xb8, true
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"bind_addr":"127.0.0.2"`, `"bind_dev":"lo"`, `"cport":6001`, `"tos":184`, `"dont_fragment":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	var back Test
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sp, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got := sp.ClientPortOf(3); got != 6003 {
		t.Errorf("ClientPortOf(3) = %d, want 6003", got)
	}
	// A spec without them writes none of them: results of older runs
	// compare equal.
	b, _ = json.Marshal(Default())
	for _, k := range []string{"bind_addr", "bind_dev", "cport", "tos", "mss", "dont_fragment"} {
		if strings.Contains(string(b), `"`+k+`"`) {
			t.Errorf("default spec writes %s: %s", k, b)
		}
	}
}

func TestDSCPName(t *testing.T) {
	for tos, want := range map[int]string{0xb8: "EF", 0x88: "AF41", 0x20: "CS1", 0x29: "", 0: "", 0x04: "LE", 0xfc: ""} {
		if got := DSCPName(tos); got != want {
			t.Errorf("DSCPName(%#x) = %q, want %q", tos, got, want)
		}
	}
}
