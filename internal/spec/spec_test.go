package spec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseKind(t *testing.T) {
	for _, in := range []string{"TCP_STREAM", "tcp_stream", "Tcp_Maerts", "tcp_bidir"} {
		if _, err := ParseKind(in); err != nil {
			t.Errorf("ParseKind(%q): %v", in, err)
		}
	}
	_, err := ParseKind("TCP_FOO")
	if err == nil || !strings.Contains(err.Error(), "TCP_STREAM") {
		t.Errorf("unknown kind: got %v, want an error listing the kinds", err)
	}
}

func TestValidate(t *testing.T) {
	checkValidate(t, []validateCase{
		{name: "default", mod: func(*Test) {}},
		{name: "bidir 8 streams", mod: func(t *Test) { t.Kind = TCPBidir; t.Parallel = 8 }},
		{name: "unknown kind", mod: func(t *Test) { t.Kind = "X" }, wantErr: "unknown test"},
		{name: "zero duration", mod: func(t *Test) { t.Duration = 0 }, wantErr: "duration"},
		{name: "too long", mod: func(t *Test) { t.Duration = 25 * time.Hour }, wantErr: "limit"},
		{name: "negative omit", mod: func(t *Test) { t.Omit = -time.Second }, wantErr: "omit"},
		{name: "tiny interval", mod: func(t *Test) { t.Interval = time.Millisecond }, wantErr: "interval"},
		{name: "no interval", mod: func(t *Test) { t.Interval = 0 }},
		{name: "zero send size", mod: func(t *Test) { t.SendSize = 0 }, wantErr: "send size"},
		{name: "negative send size", mod: func(t *Test) { t.SendSize = -1 }, wantErr: "send size"},
		{name: "huge recv size", mod: func(t *Test) { t.RecvSize = MaxMessageSize + 1 }, wantErr: "receive size"},
		{name: "negative sockbuf", mod: func(t *Test) { t.LocalSockBuf = -1 }, wantErr: "local socket buffer"},
		{name: "remote sockbuf", mod: func(t *Test) { t.RemoteSockBuf = MaxSockBuf + 1 }, wantErr: "remote socket buffer"},
		{name: "zero parallel", mod: func(t *Test) { t.Parallel = 0 }, wantErr: "parallel"},
		{name: "too parallel", mod: func(t *Test) { t.Parallel = MaxParallel + 1 }, wantErr: "parallel"},
		{name: "cc", mod: func(t *Test) { t.CongestionControl = "cubic" }},
		{name: "bad cc", mod: func(t *Test) { t.CongestionControl = "cubic; rm" }, wantErr: "congestion control"},
		{name: "ip 5", mod: func(t *Test) { t.IPVersion = 5 }, wantErr: "IP version"},
		{name: "file without path", mod: func(t *Test) { t.Payload = Payload{Kind: PayloadFile} }, wantErr: "path"},
		{name: "bad payload", mod: func(t *Test) { t.Payload = Payload{Kind: "ones"} }, wantErr: "payload"},
	})
}

// validateCase is a change to the default test and what Validate says of
// it: wantErr is a part of the error, "" for none.
type validateCase struct {
	name    string
	mod     func(*Test)
	wantErr string
}

// checkValidate runs Validate on the default test changed by each case.
func checkValidate(t *testing.T, cases []validateCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			sp := Default()
			tt.mod(&sp)
			err := sp.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want an error about %q", err, tt.wantErr)
			}
		})
	}
}

func TestStreams(t *testing.T) {
	sp := Default()
	sp.Kind = TCPBidir
	sp.Parallel = 2
	want := []Stream{{1, ClientToServer}, {2, ClientToServer}, {3, ServerToClient}, {4, ServerToClient}}
	if d := cmp.Diff(want, sp.Streams()); d != "" {
		t.Errorf("bidir streams (-want +got):\n%s", d)
	}
	sp.Kind = TCPMaerts
	sp.Parallel = 1
	if d := cmp.Diff([]Stream{{1, ServerToClient}}, sp.Streams()); d != "" {
		t.Errorf("maerts streams (-want +got):\n%s", d)
	}
}

func TestJSON(t *testing.T) {
	sp := Default()
	sp.Kind = TCPBidir
	sp.Omit = 1500 * time.Millisecond
	sp.CongestionControl = "cubic"
	sp.Payload = Payload{Kind: PayloadFile, Path: "/tmp/x"}
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"test":"TCP_BIDIR"`, `"duration_s":10`, `"omit_s":1.5`, `"send_size":131072`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var got Test
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(sp, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	// A hostile duration must fail validation, not wrap around.
	if err := json.Unmarshal([]byte(`{"test":"TCP_STREAM","duration_s":1e300,"send_size":1,"recv_size":1,"parallel":1,"payload":{"kind":"zeros"}}`), &got); err != nil {
		t.Fatal(err)
	}
	if got.Validate() == nil {
		t.Errorf("duration 1e300 s validated")
	}
}
