package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateMPTCP(t *testing.T) {
	checkValidate(t, []validateCase{
		{name: "stream", mod: func(t *Test) { t.MPTCP = true }},
		{name: "maerts", mod: func(t *Test) { t.Kind = TCPMaerts; t.MPTCP = true }},
		{name: "bidir", mod: func(t *Test) { t.Kind = TCPBidir; t.MPTCP = true; t.Parallel = 2 }},
		{name: "rr", mod: func(t *Test) { t.Kind = TCPRR; t.RequestSize, t.ResponseSize, t.Burst = 1, 1, 1; t.MPTCP = true }},
		{name: "udp", mod: func(t *Test) { t.Kind = UDPStream; t.SendSize = DefaultUDPSize; t.MPTCP = true }, wantErr: "is UDP"},
		{name: "crr", mod: func(t *Test) { t.Kind = TCPCRR; t.RequestSize, t.ResponseSize, t.Burst = 1, 1, 1; t.MPTCP = true }, wantErr: "connection per transaction"},
	})
}

// TestMPTCPJSON: the field travels to the server as "mptcp" and back,
// and a spec without it writes nothing, so an old server's spec and an
// old result compare equal.
func TestMPTCPJSON(t *testing.T) {
	sp := Default()
	sp.MPTCP = true
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"mptcp":true`) {
		t.Errorf("JSON %s lacks \"mptcp\":true", b)
	}
	var back Test
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.MPTCP {
		t.Errorf("round trip lost MPTCP: %s", b)
	}
	if b, _ := json.Marshal(Default()); strings.Contains(string(b), "mptcp") {
		t.Errorf("default spec writes mptcp: %s", b)
	}
}
