package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

func TestAuthentication(t *testing.T) {
	srv := startServer(t, server.Config{Auth: server.Auth{PSK: testKey}})
	tests := []struct {
		name    string
		key     []byte
		wantErr string // "" for success
		wantLog string
	}{
		{name: "right key", key: testKey},
		{name: "no key", key: nil, wantErr: "--psk-file", wantLog: "reason=no_key"},
		{name: "wrong key", key: []byte("not-the-key-0123456789"), wantErr: "does not match", wantLog: "reason=bad_proof"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := dial(t, client.Config{Addr: srv.addr, Security: client.Security{PSK: tt.key}})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
					t.Fatalf("authenticated run: %v", err)
				}
				return
			}
			if !errors.Is(err, control.ErrAuth) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want ErrAuth mentioning %q", err, tt.wantErr)
			}
			// The refused client is logged with its address.
			srv.logs.waitLog(t, "authentication failed", "peer=127.0.0.1:", tt.wantLog)
		})
	}
}

// TestAuthClientInsistsOnServerProof: a client given a key refuses a
// server that does not authenticate, and one that cannot prove the key.
func TestAuthClientInsistsOnServerProof(t *testing.T) {
	plain := startServer(t, server.Config{})
	_, err := dial(t, client.Config{Addr: plain.addr, Security: client.Security{PSK: testKey}})
	if !errors.Is(err, control.ErrAuth) || !strings.Contains(err.Error(), "does not authenticate") {
		t.Errorf("server without a key: got %v", err)
	}

	// A fake server that offers authentication but does not know the key.
	ln := testkit.Listen(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		cc := control.NewConn(c, 0)
		cc.ReadMagic(5 * time.Second)
		cc.Recv(5 * time.Second)
		cc.WriteMagic()
		h := control.NewHello("fake", "")
		h.Auth = &control.AuthHello{Scheme: control.AuthScheme, Nonce: control.NewNonce()}
		cc.Send(control.TypeHello, h)
		cc.Recv(5 * time.Second)
		cc.Send(control.TypeAuthOK, control.NewAuthProof([]byte("a guess at the key!!"), control.RoleServer, 1, control.Nonce{}, h.Auth.Nonce))
		cc.Recv(5 * time.Second)
	}()
	defer func() { ln.Close(); <-done }()
	_, err = dial(t, client.Config{Addr: ln.Addr().String(), Security: client.Security{PSK: testKey}})
	if !errors.Is(err, control.ErrAuth) || !strings.Contains(err.Error(), "does not know the pre-shared key") {
		t.Errorf("fake server: got %v", err)
	}
}

// authHello is a hello offering authentication with nonce.
func authHello(nonce control.Nonce) control.Hello {
	h := control.NewHello("raw", "")
	h.Auth = &control.AuthHello{Scheme: control.AuthScheme, Nonce: nonce}
	return h
}

// TestAuthReplay: a proof recorded from an honest client is refused when
// replayed on a new connection with the same client nonce, because the
// server's nonce is fresh.
func TestAuthReplay(t *testing.T) {
	srv := startServer(t, server.Config{Auth: server.Auth{PSK: testKey}})
	nc := control.NewNonce()

	honest := rawConn(t, srv.addr, "", authHello(nc))
	h, err := helloBack(t, honest)
	if err != nil || h.Auth == nil {
		t.Fatalf("server hello %+v, %v", h, err)
	}
	recorded := control.NewAuthProof(testKey, control.RoleClient, control.Version, nc, h.Auth.Nonce)
	honest.Send(control.TypeAuth, recorded)
	if err := honest.Expect(control.TypeAuthOK, nil, 5*time.Second); err != nil {
		t.Fatalf("honest client: %v", err)
	}

	replay := rawConn(t, srv.addr, "", authHello(nc))
	h2, err := helloBack(t, replay)
	if err != nil {
		t.Fatal(err)
	}
	if h2.Auth.Nonce == h.Auth.Nonce {
		t.Fatal("the server reused its nonce")
	}
	replay.Send(control.TypeAuth, recorded)
	if err := replay.Expect(control.TypeAuthOK, nil, 5*time.Second); !errors.Is(err, control.ErrAuth) {
		t.Errorf("replayed proof: got %v, want an auth error", err)
	}
	srv.logs.waitLog(t, "authentication failed", "reason=bad_proof")
}

// TestAuthBeforeAnything: a client that offers authentication but asks
// for a test instead of proving the key gets no test.
func TestAuthBeforeAnything(t *testing.T) {
	srv := startServer(t, server.Config{Auth: server.Auth{PSK: testKey}})
	cc := rawConn(t, srv.addr, "", authHello(control.NewNonce()))
	if _, err := helloBack(t, cc); err != nil {
		t.Fatal(err)
	}
	cc.Send(control.TypeTest, control.TestRequest{Spec: shortSpec(spec.TCPMaerts, 1)})
	err := cc.Expect(control.TypeAccepted, nil, 5*time.Second)
	if !errors.Is(err, control.ErrAuth) {
		t.Errorf("test before the proof: got %v, want an auth error", err)
	}
	srv.logs.waitLog(t, "authentication failed", "reason=no_proof")
}
