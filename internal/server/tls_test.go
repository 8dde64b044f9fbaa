package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// testPKI is a CA and a server certificate for 127.0.0.1 signed by it.
type testPKI struct {
	caPEM   []byte
	cert    tls.Certificate
	certDER []byte
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "wirespeed test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "wirespeed test server"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return testPKI{
		caPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert:    tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		certDER: der,
	}
}

func TestTLS(t *testing.T) {
	pki := newPKI(t)
	other := newPKI(t)
	srv := startServer(t, server.Config{Auth: server.Auth{TLS: &tls.Config{Certificates: []tls.Certificate{pki.cert}}}})
	byCA, err := client.TLSConfigCA(pki.caPEM)
	if err != nil {
		t.Fatal(err)
	}
	wrongCA, _ := client.TLSConfigCA(other.caPEM)
	pinned, err := client.TLSConfigPinned(client.Fingerprint(pki.certDER))
	if err != nil {
		t.Fatal(err)
	}
	wrongPin, _ := client.TLSConfigPinned(client.Fingerprint(other.certDER))
	tests := []struct {
		name    string
		tls     client.TLSConfig
		wantErr string
	}{
		{name: "CA", tls: byCA},
		{name: "pinned", tls: pinned},
		{name: "other CA", tls: wrongCA, wantErr: "--tls-ca"},
		{name: "wrong pin", tls: wrongPin, wantErr: "not the pinned"},
		{name: "no TLS", tls: nil, wantErr: "only over TLS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := dial(t, client.Config{Addr: srv.addr, Security: client.Security{TLS: tt.tls}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Data connections stay plain TCP on the same port.
			res, err := c.Run(context.Background(), shortSpec(spec.TCPBidir, 2))
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.Bytes == 0 {
				t.Error("no bytes moved")
			}
		})
	}
	srv.logs.waitLog(t, "control connection refused: no TLS", "peer=127.0.0.1:")
	srv.logs.waitLog(t, "TLS handshake failed", "peer=127.0.0.1:")
}

func TestTLSWithPSK(t *testing.T) {
	pki := newPKI(t)
	srv := startServer(t, server.Config{Auth: server.Auth{PSK: testKey, TLS: &tls.Config{Certificates: []tls.Certificate{pki.cert}}}})
	byCA, _ := client.TLSConfigCA(pki.caPEM)
	c := mustDial(t, client.Config{Addr: srv.addr, Security: client.Security{PSK: testKey, TLS: byCA}})
	if _, err := c.Run(context.Background(), shortSpec(spec.TCPMaerts, 1)); err != nil {
		t.Fatal(err)
	}
	_, err := dial(t, client.Config{Addr: srv.addr, Security: client.Security{TLS: byCA}})
	if !errors.Is(err, control.ErrAuth) {
		t.Errorf("TLS without the key: got %v, want ErrAuth", err)
	}
}

// TestTLSClientToPlainServer: a TLS client at a server without a
// certificate gets a hint instead of a bare EOF.
func TestTLSClientToPlainServer(t *testing.T) {
	srv := startServer(t, server.Config{})
	pinned, _ := client.TLSConfigPinned(strings.Repeat("ab", 32))
	_, err := dial(t, client.Config{Addr: srv.addr, Security: client.Security{TLS: pinned}})
	if err == nil || !strings.Contains(err.Error(), "--tls-cert") {
		t.Errorf("got %v, want a hint about --tls-cert", err)
	}
	srv.logs.waitLog(t, "TLS connection closed", "peer=127.0.0.1:")
}

func TestTLSConfigPinnedParses(t *testing.T) {
	fp := strings.Repeat("AB:", 31) + "AB"
	if _, err := client.TLSConfigPinned(fp); err != nil {
		t.Errorf("openssl-style fingerprint: %v", err)
	}
	if _, err := client.TLSConfigPinned("abcd"); err == nil {
		t.Error("short fingerprint accepted")
	}
}
