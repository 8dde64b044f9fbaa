package client

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// TLSConfig builds the TLS settings of the control connection for one
// server host; nil means plain TCP.
type TLSConfig func(host string) *tls.Config

// TLSConfigCA verifies the server's certificate against the CA
// certificates in PEM, for the host name or IP address dialled.
func TLSConfigCA(pem []byte) (TLSConfig, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no PEM certificate found")
	}
	return func(host string) *tls.Config {
		return &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS13}
	}, nil
}

// TLSConfigPinned accepts exactly the server certificate whose SHA-256
// fingerprint (of its DER encoding) is hexFP; colons and case do not
// matter, so `openssl x509 -noout -fingerprint -sha256` output works.
func TLSConfigPinned(hexFP string) (TLSConfig, error) {
	s := strings.ToLower(strings.NewReplacer(":", "", " ", "").Replace(strings.TrimPrefix(strings.TrimSpace(hexFP), "sha256 Fingerprint=")))
	want, err := hex.DecodeString(s)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("fingerprint %q is not %d hex digits (a SHA-256)", hexFP, 2*sha256.Size)
	}
	return func(string) *tls.Config {
		return &tls.Config{
			MinVersion: tls.VersionTLS13,
			// The pin replaces the chain check, which needs no CA.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("the server sent no certificate")
				}
				got := sha256.Sum256(cs.PeerCertificates[0].Raw)
				if subtle.ConstantTimeCompare(got[:], want) != 1 {
					return fmt.Errorf("the server's certificate has fingerprint %x, not the pinned %x", got, want)
				}
				return nil
			},
		}
	}, nil
}

// Fingerprint returns the SHA-256 fingerprint of a DER certificate in hex,
// as --tls-fingerprint takes it.
func Fingerprint(der []byte) string {
	fp := sha256.Sum256(der)
	return hex.EncodeToString(fp[:])
}

// startTLS wraps the control connection in TLS when the config asks for it
// and runs the handshake within the handshake timeout.
func (cfg *Config) startTLS(ctx context.Context, c net.Conn, host string) (net.Conn, error) {
	if cfg.TLS == nil {
		return c, nil
	}
	tc := tls.Client(c, cfg.TLS(host))
	hctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		c.Close()
		hint := ""
		var ce *tls.CertificateVerificationError
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
			hint = "; the server hung up: is it started with --tls-cert and --tls-key?"
		case errors.As(err, &ce):
			hint = "; check --tls-ca, or pin the server's certificate with --tls-fingerprint"
		}
		// The error may quote the server's certificate (the names it is
		// valid for), which is the server's text.
		return nil, fmt.Errorf("TLS handshake with %s: %w%s", cfg.Addr, escapedErr{err}, hint)
	}
	return tc, nil
}
