package control

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestAuthProof(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	nc, ns := NewNonce(), NewNonce()
	if nc == ns {
		t.Fatal("two fresh nonces are equal")
	}
	good := NewAuthProof(key, RoleClient, 1, nc, ns)
	if err := VerifyAuth(key, RoleClient, 1, nc, ns, good); err != nil {
		t.Fatalf("valid proof refused: %v", err)
	}
	if strings.Contains(good.MAC, string(key)) || strings.Contains(good.MAC, "30313233") {
		t.Errorf("proof %q carries the key", good.MAC)
	}
	other := NewNonce()
	tests := []struct {
		name    string
		key     []byte
		role    string
		version int
		nc, ns  Nonce
		proof   AuthProof
	}{
		{name: "wrong key", key: []byte("another key of sixteen bytes"), role: RoleClient, version: 1, nc: nc, ns: ns, proof: good},
		// A client's proof is not a server's: reflecting it back fails.
		{name: "reflected as the server's", key: key, role: RoleServer, version: 1, nc: nc, ns: ns, proof: good},
		// A recorded proof is useless against a fresh server nonce.
		{name: "replayed on a new connection", key: key, role: RoleClient, version: 1, nc: nc, ns: other, proof: good},
		{name: "other client nonce", key: key, role: RoleClient, version: 1, nc: other, ns: ns, proof: good},
		{name: "nonces swapped", key: key, role: RoleClient, version: 1, nc: ns, ns: nc, proof: good},
		{name: "other version", key: key, role: RoleClient, version: 2, nc: nc, ns: ns, proof: good},
		{name: "not hex", key: key, role: RoleClient, version: 1, nc: nc, ns: ns, proof: AuthProof{MAC: "zz"}},
		{name: "short", key: key, role: RoleClient, version: 1, nc: nc, ns: ns, proof: AuthProof{MAC: good.MAC[:62]}},
		{name: "empty", key: key, role: RoleClient, version: 1, nc: nc, ns: ns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyAuth(tt.key, tt.role, tt.version, tt.nc, tt.ns, tt.proof)
			if !errors.Is(err, ErrAuth) {
				t.Errorf("got %v, want ErrAuth", err)
			}
		})
	}
}

func TestAuthHelloJSON(t *testing.T) {
	h := NewHello("v1", "host")
	h.Auth = &AuthHello{Scheme: AuthScheme, Nonce: NewNonce()}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var got Hello
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Auth == nil || *got.Auth != *h.Auth {
		t.Errorf("round trip: got %+v, want %+v", got.Auth, h.Auth)
	}
	// A hello without auth (an older client) has none.
	var plain Hello
	json.Unmarshal([]byte(`{"protocol":"wirespeed","version":1,"min_version":1}`), &plain)
	if plain.Auth != nil {
		t.Errorf("hello without auth decoded to %+v", plain.Auth)
	}
	for _, bad := range []string{`"abc"`, `"` + strings.Repeat("0", 62) + `"`, `"` + strings.Repeat("g", 64) + `"`, `12`} {
		var n Nonce
		if err := json.Unmarshal([]byte(bad), &n); err == nil {
			t.Errorf("nonce %s accepted", bad)
		}
	}
}

func TestCheckAuthHello(t *testing.T) {
	tests := []struct {
		name string
		in   *AuthHello
		ok   bool
	}{
		{name: "good", in: &AuthHello{Scheme: AuthScheme, Nonce: NewNonce()}, ok: true},
		{name: "none", in: nil},
		{name: "other scheme", in: &AuthHello{Scheme: "plain", Nonce: NewNonce()}},
		{name: "zero nonce", in: &AuthHello{Scheme: AuthScheme}},
	}
	for _, tt := range tests {
		err := CheckAuthHello(tt.in)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrAuth)) {
			t.Errorf("%s: got %v", tt.name, err)
		}
	}
}

func TestParseKey(t *testing.T) {
	if k, err := ParseKey([]byte("  0123456789abcdef0123\n")); err != nil || string(k) != "0123456789abcdef0123" {
		t.Errorf("got %q, %v", k, err)
	}
	if _, err := ParseKey([]byte("short\n")); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("short key: got %v", err)
	}
}

func TestRemoteErrorCodes(t *testing.T) {
	if !errors.Is(&RemoteError{Code: CodeAuth}, ErrAuth) || !errors.Is(&RemoteError{Code: CodeLimit}, ErrLimit) {
		t.Error("auth and limit codes do not map to their sentinels")
	}
}
