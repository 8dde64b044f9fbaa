package cli

import (
	"context"
	"strings"
	"testing"

	"wirespeed/internal/dashboard"
)

// TestDashboardUsageErrors: off loopback the dashboard needs TLS and a
// token or user; bad limits and files are named.
func TestDashboardUsageErrors(t *testing.T) {
	key := writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef\n"))
	empty := writeFile(t, "empty", []byte("\n"))
	short := writeFile(t, "short", []byte("abc\n"))
	nocolon := writeFile(t, "users", []byte("noc\n"))
	db := t.TempDir() + "/a.db"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"dashboard", "--archive", db, "--listen", "0.0.0.0:8575"}, "not loopback"},
		{[]string{"dashboard", "--archive", db, "--listen", "192.0.2.1:8575", "--token-file", key}, "not loopback"},
		{[]string{"dashboard", "--archive", db, "--listen", "8575"}, "HOST:PORT"},
		{[]string{"dashboard", "--archive", db, "--tls-cert", key}, "go together"},
		{[]string{"dashboard", "--archive", db, "--tls-cert", key, "--tls-key", key}, "--tls-cert"},
		{[]string{"dashboard", "--archive", db, "--token-file", empty}, "empty"},
		// (issue 47, item 12: a 3-byte token was accepted.)
		{[]string{"dashboard", "--archive", db, "--token-file", short}, "is 3 bytes, give one of at least 16 (make one with `head -c 16 /dev/urandom | base64 > FILE`)"},
		{[]string{"dashboard", "--archive", db, "--auth-file", nocolon}, "USER:PASSWORD"},
		{[]string{"dashboard", "--archive", db, "--threshold", "TCP_STREAM=fast,1M"}, "warning limit"},
		{[]string{"dashboard", "--archive", db, "--threshold", "TCP_STREAM"}, "TEST=WARN,CRIT"},
		{[]string{"dashboard"}, "no archive"},
	} {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			t.Setenv(ArchiveEnv, "")
			code, _, errOut := execute(t, context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d mentioning %q", code, errOut, ExitUsage, tt.want)
			}
		})
	}
}

func TestParseThreshold(t *testing.T) {
	for _, tt := range []struct {
		in   string
		test string
		want dashboard.Threshold
	}{
		{"tcp_stream=900M,500M", "TCP_STREAM", dashboard.Threshold{Warn: 900e6, Crit: 500e6}},
		{"TCP_RR=200,1000us", "TCP_RR", dashboard.Threshold{Warn: 200, Crit: 1000}},
	} {
		test, th, err := parseThreshold(tt.in)
		if err != nil || test != tt.test || th != tt.want {
			t.Errorf("%s: %s %+v %v; want %s %+v", tt.in, test, th, err, tt.test, tt.want)
		}
	}
}
