package client

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"wirespeed/internal/control"
)

// Security is the part of Config that authenticates the server and this
// client: a pre-shared key, TLS on the control connection, or both.
type Security struct {
	// PSK, when set, is the key to prove knowledge of (HMAC-SHA256
	// challenge-response, docs/protocol.md). The server must prove it too:
	// a server that does not authenticate is refused.
	PSK []byte
	// TLS, when set, wraps the control connection; see TLSConfigCA and
	// TLSConfigPinned. Data connections stay plain TCP.
	TLS TLSConfig
}

// offerAuth adds this client's authentication offer to its hello and
// returns the nonce it sent.
func (c *Client) offerAuth(h *control.Hello) control.Nonce {
	if c.cfg.PSK == nil {
		return control.Nonce{}
	}
	n := control.NewNonce()
	h.Auth = &control.AuthHello{Scheme: control.AuthScheme, Nonce: n}
	return n
}

// authenticate runs the client's half of the challenge-response after the
// hellos: it proves the key with a MAC over both nonces and the version,
// and checks the server's proof in constant time.
func (c *Client) authenticate(version int, mine control.Nonce) error {
	key := c.cfg.PSK
	if key == nil {
		return nil
	}
	if c.server.Auth == nil {
		return fmt.Errorf("%w: the server does not authenticate (it was started without --psk-file); not going on, since this run was given a key", control.ErrAuth)
	}
	if err := control.CheckAuthHello(c.server.Auth); err != nil {
		return err
	}
	theirs := c.server.Auth.Nonce
	if err := c.cc.Send(control.TypeAuth, control.NewAuthProof(key, control.RoleClient, version, mine, theirs)); err != nil {
		return err
	}
	var p control.AuthProof
	if err := c.cc.Expect(control.TypeAuthOK, &p, c.cfg.HandshakeTimeout); err != nil {
		return err
	}
	if err := control.VerifyAuth(key, control.RoleServer, version, mine, theirs, p); err != nil {
		return fmt.Errorf("%w: the server does not know the pre-shared key; it is not the server you meant", control.ErrAuth)
	}
	return nil
}

// explainLost says in words what a lost control connection means.
func explainLost(err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("the server closed the control connection (it stopped or was killed): %w", err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("no word from the server within the deadline (it hangs or the network dropped): %w", err)
	}
	return err
}
