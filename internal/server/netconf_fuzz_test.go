package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"wirespeed/internal/control"
	"wirespeed/internal/netconf"
)

// FuzzNetconfRequest feeds the server a netconf message body as a remote
// session could send it, decoded as the session decodes it and checked
// by parseNetconfRequest: nothing it accepts may name a path, exceed the
// bounds, or carry a setting that does not read back as itself.
func FuzzNetconfRequest(f *testing.F) {
	for _, req := range []control.NetconfRequest{
		{Action: control.NetconfCheck, Dev: "eth0", Settings: []string{"tso=off", "gso=off", "mtu=9000"}},
		{Action: control.NetconfSet, Dev: "veth-a", Settings: []string{"tx-checksumming=off"}},
		{Action: control.NetconfRestore, Dev: "eth0"},
		{Action: control.NetconfKeep, Dev: "eth0"},
		{Action: "reboot", Dev: "../../etc", Settings: []string{"mtu=-1", "=on", "gro=maybe"}},
		{Action: control.NetconfCheck, Dev: "../../etc/passwd"},
		{Action: control.NetconfRestore, Dev: "eth0 lo"},
	} {
		b, _ := json.Marshal(req)
		f.Add(b)
	}
	f.Add([]byte(`{"action":"set","dev":"eth0","settings":["mtu=99999999999999999999"]}`))
	f.Add([]byte(`{"action":"set","dev":"eth0\u0000","settings":null}`))
	f.Add([]byte(`{"action":1,"dev":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req control.NetconfRequest
		if err := (control.Message{Type: control.TypeNetconf, Body: body}).Decode(&req); err != nil {
			return
		}
		settings, code, err := parseNetconfRequest(req)
		if err != nil {
			if code != control.CodeNetconf && code != control.CodeProtocol {
				t.Fatalf("refused with code %q", code)
			}
			if code == control.CodeProtocol && !errors.Is(err, control.ErrProtocol) {
				t.Fatalf("protocol refusal %v is not ErrProtocol", err)
			}
			return
		}
		if req.Dev == "" || len(req.Dev) > 64 || strings.ContainsAny(req.Dev, "/ \x00") {
			t.Fatalf("accepted device %q", req.Dev)
		}
		switch req.Action {
		case control.NetconfCheck, control.NetconfSet, control.NetconfRestore, control.NetconfKeep:
		default:
			t.Fatalf("accepted action %q", req.Action)
		}
		if len(settings) != len(req.Settings) || len(settings) > maxNetconfSettings {
			t.Fatalf("%d settings from %d asked, at most %d", len(settings), len(req.Settings), maxNetconfSettings)
		}
		for _, st := range settings {
			if st.Name == "" || strings.Contains(st.Name, "=") {
				t.Fatalf("accepted setting name %q", st.Name)
			}
			if strings.EqualFold(st.Name, "mtu") && (st.MTU < 68 || st.MTU > 1<<20) {
				t.Fatalf("accepted MTU %d", st.MTU)
			}
			back, err := netconf.ParseSetting(st.String())
			if err != nil || back != st {
				t.Fatalf("setting %+v writes as %q, which reads back as %+v, %v", st, st.String(), back, err)
			}
		}
	})
}
