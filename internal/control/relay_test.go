package control

import (
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"

	"wirespeed/internal/spec"
)

func relayMessage(body string) Message {
	return Message{Type: TypeRelay, Body: json.RawMessage(body)}
}

// defaultSpec is spec.Default() in JSON, for SPEC in test bodies.
var defaultSpec = func() string {
	b, _ := json.Marshal(spec.Default())
	return string(b)
}()

func withSpec(body string) string { return strings.ReplaceAll(body, "SPEC", defaultSpec) }

func TestDecodeRelayRequest(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr error
		wantMsg string
	}{
		{name: "ok", body: `{"peer":"10.0.0.2:7575","spec":SPEC,"source":"a","destination":"b"}`},
		{name: "ipv6", body: `{"peer":"[fd00::2]:7575","spec":SPEC}`},
		{name: "name", body: `{"peer":"node-2.wirespeed.svc:7575","spec":SPEC}`},
		{name: "no port", body: `{"peer":"10.0.0.2","spec":SPEC}`, wantErr: ErrProtocol, wantMsg: "missing port"},
		{name: "port 0", body: `{"peer":"10.0.0.2:0","spec":SPEC}`, wantErr: ErrProtocol, wantMsg: "1 to 65535"},
		{name: "no host", body: `{"peer":":7575","spec":SPEC}`, wantErr: ErrProtocol, wantMsg: "no host"},
		{name: "odd host", body: `{"peer":"a/b:7575","spec":SPEC}`, wantErr: ErrProtocol, wantMsg: "only letters"},
		{name: "long peer", body: `{"peer":"` + strings.Repeat("a", 300) + `:1","spec":SPEC}`, wantErr: ErrProtocol, wantMsg: "at most"},
		{name: "label control char", body: `{"peer":"h:1","spec":SPEC,"source":"a\nb"}`, wantErr: ErrProtocol, wantMsg: "non-printable"},
		{name: "long label", body: `{"peer":"h:1","spec":SPEC,"destination":"` + strings.Repeat("x", 129) + `"}`, wantErr: ErrProtocol, wantMsg: "at most 128"},
		{name: "bad spec", body: `{"peer":"h:1","spec":{"test":"TCP_NOPE"}}`, wantErr: ErrInvalid, wantMsg: "unknown test"},
		{name: "invalid spec", body: `{"peer":"h:1","spec":{"test":"TCP_STREAM","parallel":-1}}`, wantErr: ErrInvalid, wantMsg: "duration"},
		{name: "not an object", body: `[]`, wantErr: ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRelayRequest(relayMessage(withSpec(tt.body)))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("got %v, want %v saying %q", err, tt.wantErr, tt.wantMsg)
			}
		})
	}
}

func TestRelayErrorCodes(t *testing.T) {
	for code, want := range map[string]error{CodeRelayRefused: ErrRelayRefused, CodeRelayFailed: ErrRelayFailed} {
		if err := error(&RemoteError{Code: code, Message: "x"}); !errors.Is(err, want) {
			t.Errorf("code %s is not %v", code, want)
		}
	}
}

// FuzzDecodeRelayRequest: what a relaying server accepts names a
// HOST:PORT it can dial and carries a valid spec and short, printable
// labels.
func FuzzDecodeRelayRequest(f *testing.F) {
	f.Add(withSpec(`{"peer":"10.0.0.2:7575","spec":SPEC,"source":"a","destination":"b"}`))
	f.Add(`{"peer":"[fd00::2]:7575","spec":{"test":"UDP_RR"}}`)
	f.Add(`{"peer":"h:99999","spec":{}}`)
	f.Add(`{"peer":"","spec":null}`)
	f.Fuzz(func(t *testing.T, body string) {
		r, err := DecodeRelayRequest(relayMessage(body))
		if err != nil {
			return
		}
		h, _, err := net.SplitHostPort(r.Peer)
		if err != nil || h == "" || len(r.Peer) > MaxPeerLen {
			t.Fatalf("accepted peer %q", r.Peer)
		}
		if len(r.Source) > MaxLabelLen || len(r.Destination) > MaxLabelLen {
			t.Fatalf("accepted long labels")
		}
		if err := r.Spec.Validate(); err != nil {
			t.Fatalf("accepted an invalid spec: %v", err)
		}
	})
}
