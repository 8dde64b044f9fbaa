package measure

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadNetCountersDelta(t *testing.T) {
	before, err := ReadNetCounters("testdata/proc-before")
	if err != nil {
		t.Fatal(err)
	}
	after, err := ReadNetCounters("testdata/proc-after")
	if err != nil {
		t.Fatal(err)
	}
	got := after.Delta(before)

	// Differences of the fixture values, worked out by hand.
	want := Counters{
		IP: IPCounters{
			OutDiscards:  4,
			FragOKs:      5,
			FragFails:    1,
			FragCreates:  35,
			ReasmReqds:   40,
			ReasmOKs:     9,
			ReasmFails:   3,
			ReasmTimeout: 2,
		},
		TCP: TCPCounters{
			InSegs:       9450127 - 9449027, // 1100
			OutSegs:      1200,
			RetransSegs:  7,
			InErrs:       1,
			InCsumErrors: 2,
		},
		UDP: UDPCounters{
			InDatagrams:  50,
			InErrors:     3,
			RcvbufErrors: 3,
			SndbufErrors: 0,
			InCsumErrors: 1,
		},
		TCPExt: TCPExtCounters{
			LostRetransmit:   2,
			FastRetrans:      4,
			SlowStartRetrans: 1,
			Timeouts:         2,
			SACKRecovery:     3,
		},
	}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "All" }, cmp.Ignore())); diff != "" {
		t.Errorf("Delta (-want +got):\n%s", diff)
	}
	if got.TCP.InSegs != 1100 {
		t.Errorf("Tcp.InSegs delta = %d, want 1100", got.TCP.InSegs)
	}
	if !got.IP.Fragmented() || (IPCounters{ReasmOKs: 9, ReasmReqds: 18}).Fragmented() {
		t.Errorf("Fragmented() true only when a datagram was cut or a reassembly failed")
	}
	if n := got.ChecksumErrors(); n != 3 {
		t.Errorf("ChecksumErrors() = %d, want 3", n)
	}

	// All holds every counter of both files, including ones without a
	// named field, gauges, and a counter that wrapped around 2^64.
	for name, want := range map[string]int64{
		"Ip.InReceives":          1000,
		"Tcp.ActiveOpens":        1,
		"Tcp.CurrEstab":          -1, // a gauge going down
		"Tcp.MaxConn":            0,  // -1 in both
		"IpExt.InOctets":         11, // 18446744073709551610 -> 5 wraps
		"Udp.NoPorts":            0,
		"TcpExt.TCPSackRecovery": 3,
	} {
		if v, ok := got.All[name]; !ok || v != want {
			t.Errorf("All[%q] = %d (present %v), want %d", name, v, ok, want)
		}
	}
	if n := len(got.All); n < 150 {
		t.Errorf("All has %d counters; the fixture has more than 150", n)
	}
	if before["Tcp.MaxConn"] != -1 {
		t.Errorf("Tcp.MaxConn = %d, want -1", before["Tcp.MaxConn"])
	}
}

func TestDeltaOnlyCommonCounters(t *testing.T) {
	before := NetCounters{"Tcp.InSegs": 10, "Tcp.Gone": 5}
	after := NetCounters{"Tcp.InSegs": 15, "Tcp.New": 7}
	got := after.Delta(before)
	if diff := cmp.Diff(map[string]int64{"Tcp.InSegs": 5}, got.All); diff != "" {
		t.Errorf("All (-want +got):\n%s", diff)
	}
	if got.TCP.InSegs != 5 || got.TCP.OutSegs != 0 {
		t.Errorf("TCP = %+v, want InSegs 5 and the rest 0", got.TCP)
	}
}

func TestParseNetCounters(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    NetCounters
		wantErr string // part of the message
	}{
		{
			name: "two prefixes",
			in:   "Tcp: InSegs OutSegs\nTcp: 1 2\nUdp: InErrors\nUdp: 3\n",
			want: NetCounters{"Tcp.InSegs": 1, "Tcp.OutSegs": 2, "Udp.InErrors": 3},
		},
		{
			name: "blank lines and no final newline",
			in:   "\nTcp: InSegs\n\nTcp: 18446744073709551615",
			want: NetCounters{"Tcp.InSegs": -1},
		},
		{name: "empty", in: "", wantErr: "no counters"},
		{name: "names without values", in: "Tcp: InSegs OutSegs\n", wantErr: "line 1: names for Tcp have no line of values"},
		{name: "prefix mismatch", in: "Tcp: InSegs\nUdp: 1\n", wantErr: "line 2: names for Tcp on line 1 are followed by values for Udp"},
		{name: "count mismatch", in: "Tcp: InSegs OutSegs\nTcp: 1\n", wantErr: "line 2: Tcp has 2 names on line 1 but 1 values"},
		{name: "not a number", in: "Tcp: InSegs\nTcp: many\n", wantErr: `Tcp.InSegs value "many" is not an integer`},
		{name: "no prefix", in: "InSegs OutSegs\n1 2\n", wantErr: "line 1: no \"Prefix:\""},
		{name: "empty header", in: "Tcp:\nTcp:\n", wantErr: "Tcp has no counter names"},
		{name: "too long", in: "Tcp: " + strings.Repeat("x", maxCounterLine+1), wantErr: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseNetCounters(strings.NewReader(tt.in), "snmp")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "snmp") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadNetCountersMissingFile(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "net"), 0o755)
	os.WriteFile(filepath.Join(dir, "net", "snmp"), []byte("Tcp: InSegs\nTcp: 1\n"), 0o644)
	_, err := ReadNetCounters(dir)
	if err == nil || !strings.Contains(err.Error(), "netstat") {
		t.Fatalf("error = %v, want one naming the missing netstat file", err)
	}
}

func TestReadNetCountersLive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux /proc")
	}
	c, err := ReadNetCounters("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Tcp.InSegs", "Udp.InDatagrams", "TcpExt.TCPTimeouts"} {
		if _, ok := c[name]; !ok {
			t.Errorf("live counters lack %s", name)
		}
	}
}

// parseNetCounters parses one file as ReadNetCounters does each of
// /proc/net/snmp and /proc/net/netstat.
func parseNetCounters(r io.Reader, name string) (NetCounters, error) {
	c := NetCounters{}
	if err := c.parse(r, name); err != nil {
		return nil, err
	}
	return c, nil
}
