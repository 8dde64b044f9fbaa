package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"wirespeed/internal/client"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs `wirespeed serve --listen 127.0.0.1:0 args...` in this
// process and returns its address and log; stop ends it and returns its
// exit status.
func startServe(t *testing.T, args ...string) (addr string, logs *syncBuffer, stop func() int) {
	t.Helper()
	logs = &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), &bytes.Buffer{}, logs)
	}()
	addr = waitLogAttr(t, logs, "listening", "addr")
	var once sync.Once
	code := -1
	stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop")
			}
		})
		return code
	}
	t.Cleanup(func() { stop() })
	return addr, logs, stop
}

// waitLogAttr waits for a log line with msg and returns the value of its
// attribute key.
func waitLogAttr(t *testing.T, logs *syncBuffer, msg, key string) string {
	t.Helper()
	re := regexp.MustCompile(`msg="?` + regexp.QuoteMeta(msg) + `"? .*\b` + key + `=(\S+)`)
	for i := 0; i < 250; i++ {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q line with %s in:\n%s", msg, key, logs.String())
	return ""
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSecurityUsageErrors(t *testing.T) {
	key := writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef\n"))
	short := writeFile(t, "short", []byte("short\n"))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--psk-file", "/no/such/key"}, "--psk-file"},
		{[]string{"serve", "--psk-file", short}, "at least 16"},
		{[]string{"serve", "--tls-cert", key}, "go together"},
		{[]string{"serve", "--tls-cert", key, "--tls-key", key}, "--tls-cert"},
		{[]string{"serve", "--max-duration", "0"}, "--max-duration"},
		{[]string{"serve", "--max-parallel", "0"}, "--max-parallel"},
		{[]string{"serve", "--max-conns-per-addr", "0"}, "--max-conns-per-addr"},
		{[]string{"serve", "--max-udp-rate", "fast"}, "--max-udp-rate"},
		{[]string{"serve", "--max-frame", "1K"}, "--max-frame"},
		{[]string{"serve", "--handshake-timeout", "0"}, "--handshake-timeout"},
		{[]string{"run", "--psk-file", key}, "give its HOST"},
		{[]string{"run", "host", "--psk-file", short}, "at least 16"},
		{[]string{"run", "host", "--tls-ca", key, "--tls-fingerprint", "ab"}, "exclude"},
		{[]string{"run", "host", "--tls-ca", key}, "no PEM"},
		{[]string{"run", "host", "--tls-fingerprint", "abcd"}, "--tls-fingerprint"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errOut := execute(t, context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d mentioning %q", code, errOut, ExitUsage, tt.want)
			}
		})
	}
}

func TestServeWithKeyAndMetrics(t *testing.T) {
	key := writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef\n"))
	addr, logs, stop := startServe(t, "--psk-file", key, "--metrics-listen", "127.0.0.1:0", "--max-duration", "5s")
	metrics := waitLogAttr(t, logs, "metrics listening", "addr")

	code, out, errOut := execute(t, context.Background(), "run", addr, "--psk-file", key, "-l", "0.3", "-i", "0")
	if code != ExitOK || !strings.Contains(out, "10^6bits/sec") {
		t.Fatalf("run with the key: exit %d, %s", code, errOut)
	}
	code, _, errOut = execute(t, context.Background(), "run", addr, "-l", "0.3")
	if code != ExitRuntime || !strings.Contains(errOut, "--psk-file") {
		t.Errorf("run without the key: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = execute(t, context.Background(), "run", addr, "--psk-file", key, "-l", "10")
	if code != ExitRuntime || !strings.Contains(errOut, "--max-duration") {
		t.Errorf("run over --max-duration: exit %d, stderr %q", code, errOut)
	}

	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		page.WriteString(sc.Text() + "\n")
	}
	resp.Body.Close()
	for _, want := range []string{
		`wirespeed_tests_served_total{result="ok"} 1`,
		`wirespeed_auth_failures_total{reason="no_key"} 1`,
		`wirespeed_tests_refused_total{reason="max_duration"} 1`,
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if code := stop(); code != ExitOK {
		t.Errorf("serve exit %d", code)
	}
	// One line per test, with what an operator needs.
	if !regexp.MustCompile(`msg="test done" peer=127\.0\.0\.1:\d+ test=TCP_STREAM duration=\S+ bytes=\d+ result=ok`).MatchString(logs.String()) {
		t.Errorf("no complete test line in:\n%s", logs.String())
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// and returns their paths and the certificate's DER.
func selfSigned(t *testing.T) (certFile, keyFile string, der []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "wirespeed test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile = writeFile(t, "cert.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	keyFile = writeFile(t, "key.pem", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	return certFile, keyFile, der
}

func TestServeTLS(t *testing.T) {
	cert, key, der := selfSigned(t)
	addr, logs, _ := startServe(t, "--tls-cert", cert, "--tls-key", key)
	fp := waitLogAttr(t, logs, "control connections require TLS", "fingerprint")
	if fp != client.Fingerprint(der) {
		t.Errorf("logged fingerprint %s, want %s", fp, client.Fingerprint(der))
	}
	for _, args := range [][]string{
		{"run", addr, "--tls-fingerprint", fp, "-l", "0.3", "-R"},
		{"run", addr, "--tls-ca", cert, "-l", "0.3"},
	} {
		if code, _, errOut := execute(t, context.Background(), args...); code != ExitOK {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
	code, _, errOut := execute(t, context.Background(), "run", addr, "-l", "0.3")
	if code != ExitRuntime || !strings.Contains(errOut, "only over TLS") {
		t.Errorf("plain run against a TLS server: exit %d, stderr %q", code, errOut)
	}
}

// TestSweepWithKey: sweep speaks to a server that requires a key as run
// does, and is refused without it.
func TestSweepWithKey(t *testing.T) {
	key := writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef\n"))
	addr, _, stop := startServe(t, "--psk-file", key)
	defer stop()
	if code, out, errOut := execute(t, context.Background(), "sweep", addr, "--psk-file", key, "--sizes", "1K,8K", "-l", "0.2", "-i", "0"); code != ExitOK || !strings.Contains(out, "8192") {
		t.Errorf("sweep with the key: exit %d, %s%s", code, out, errOut)
	}
	if code, _, errOut := execute(t, context.Background(), "sweep", addr, "--sizes", "1K", "-l", "0.2"); code != ExitRuntime || !strings.Contains(errOut, "--psk-file") {
		t.Errorf("sweep without the key: exit %d, stderr %q", code, errOut)
	}
}

// TestServeWarnsNetconfWithoutKey: --allow-netconf without --psk-file
// lets no client change anything (only authenticated ones may), so serve
// says so at start, naming the flag to add; with a key it does not.
func TestServeWarnsNetconfWithoutKey(t *testing.T) {
	_, logs, stop := startServe(t, "--allow-netconf")
	stop()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "--allow-netconf has no effect without --psk-file") {
		t.Errorf("no warning about --allow-netconf without --psk-file:\n%s", logs.String())
	}
	key := writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef"))
	_, logs, stop = startServe(t, "--allow-netconf", "--psk-file", key)
	stop()
	if strings.Contains(logs.String(), "--allow-netconf has no effect") {
		t.Errorf("a warning about --allow-netconf with a key:\n%s", logs.String())
	}
}
