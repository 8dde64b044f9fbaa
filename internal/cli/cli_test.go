package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/testkit"
)

// execute runs the command line and returns its exit status and output.
func execute(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestRunEmbeddedText(t *testing.T) {
	code, out, errOut := execute(t, context.Background(), "run", "-l", "0.4", "-i", "0.2", "--cc", "cubic")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"(embedded server)", "10^6bits/sec", "client->server", "Retr  Cwnd"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The first interval line; its end is as sampled, a few ms late on a
	// loaded machine.
	if !regexp.MustCompile(`0\.00-0\.[12]\d   sec`).MatchString(out) {
		t.Errorf("output lacks the first 0.2 s interval line:\n%s", out)
	}
}

func TestRunUDPAndRR(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-t", "udp_stream", "-b", "50M"}, []string{"Messages", "local sends", "remote receives", "datagrams:", "lost", "jitter"}},
		{[]string{"-t", "udp_stream", "-b", "50M", "-v"}, []string{"datagrams:", "RcvbufErrors", "SndbufErrors"}},
		{[]string{"-t", "udp_stream", "-R", "-m", "64"}, []string{"remote sends", "local receives", "server->client datagrams"}},
		{[]string{"-t", "tcp_rr", "-r", "32,256", "--burst", "2"}, []string{"Trans.", "latency us:", "32-byte requests, 256-byte responses, 2 in flight"}},
		{[]string{"-t", "tcp_rr", "-v"}, []string{"Trans.", "latency us:", "transactions over the whole run"}},
		{[]string{"-t", "udp_rr"}, []string{"Trans.", "latency us:"}},
		{[]string{"-t", "tcp_crr", "-P", "2"}, []string{"Trans.", "latency us:"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{"run", "-l", "0.3", "-i", "0.15"}, tt.args...)
			code, out, errOut := execute(t, context.Background(), args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestRunJSONAndFiles(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"json", "csv", "txt"} {
		out := filepath.Join(dir, "r."+ext)
		code, stdout, errOut := execute(t, context.Background(), "run", "-l", "0.3", "-t", "tcp_bidir", "-P", "2", "--json", "-o", out)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc struct {
			Schema  string
			Tool    struct{ Version string }
			Summary struct {
				Throughput float64 `json:"throughput_bps"`
				Bytes      int64   `json:"bytes"`
			}
			Directions []any
			Streams    []any
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
		}
		if doc.Schema == "" || doc.Tool.Version == "" || doc.Summary.Throughput <= 0 || doc.Summary.Bytes <= 0 || len(doc.Directions) != 2 || len(doc.Streams) != 4 {
			t.Errorf("document %+v", doc)
		}
		b, err := os.ReadFile(out)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", out, err)
		}
		switch ext {
		case "csv":
			if lines := strings.Count(string(b), "\n"); lines != 4 {
				t.Errorf("csv has %d lines, want header + 2 directions + both:\n%s", lines, b)
			}
		case "txt":
			if !strings.Contains(string(b), "both directions") {
				t.Errorf("txt lacks the table:\n%s", b)
			}
		}
	}
}

func TestRunTradeoff(t *testing.T) {
	code, out, errOut := execute(t, context.Background(), "run", "--tradeoff", "-l", "0.3", "-i", "0")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "TCP_MAERTS / TCP_STREAM = ") || strings.Count(out, "10^6bits/sec") < 2 {
		t.Errorf("tradeoff output:\n%s", out)
	}
}

func TestRunInterrupted(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	code, stdout, errOut := execute(t, ctx, "run", "-l", "20", "-o", out)
	if code != ExitRuntime || !strings.Contains(errOut, "interrupted") {
		t.Errorf("exit %d, stderr %q; want 1 and a word about the interrupt", code, errOut)
	}
	if !strings.Contains(stdout, "INTERRUPTED") || !strings.Contains(stdout, "10^6bits/sec") {
		t.Errorf("stdout lacks the partial result:\n%s", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Interrupted bool
		Summary     struct {
			Bytes int64 `json:"bytes"`
		}
	}
	json.Unmarshal(b, &doc)
	if !doc.Interrupted || doc.Summary.Bytes == 0 {
		t.Errorf("written document: interrupted %v, bytes %d", doc.Interrupted, doc.Summary.Bytes)
	}
}

func TestUsageErrors(t *testing.T) {
	checkUsageErrors(t, []usageCase{
		{[]string{"run", "-t", "TCP_FOO"}, "unknown test"},
		{[]string{"run", "-m", "-5"}, "negative"},
		{[]string{"run", "-m", "0"}, "send size"},
		{[]string{"run", "-l", "ten"}, "not a duration"},
		{[]string{"run", "-l", "0"}, "duration"},
		{[]string{"run", "-P", "0"}, "parallel"},
		{[]string{"run", "-4", "-6"}, "exclude"},
		{[]string{"run", "-R", "-t", "tcp_bidir"}, "-R"},
		{[]string{"run", "--tradeoff", "-R"}, "--tradeoff"},
		{[]string{"run", "--payload", "/no/such/file"}, "--payload"},
		{[]string{"run", "-o", "result.xml"}, ".json"},
		{[]string{"run", "-t", "TCP_RR", "-b", "10M"}, "not paced"},
		{[]string{"run", "-t", "udp_stream", "-m", "8"}, "datagram size"},
		{[]string{"run", "-t", "udp_stream", "-m", "70000"}, "datagram size"},
		{[]string{"run", "-t", "tcp_rr", "-r", "1,2,3"}, "REQ,RESP"},
		{[]string{"run", "-t", "tcp_rr", "-r", "0"}, "request size"},
		{[]string{"run", "-t", "tcp_crr", "--burst", "2"}, "burst"},
		{[]string{"run", "-t", "tcp_rr", "-R"}, "-R"},
		{[]string{"run", "a", "b"}, "at most one"},
		{[]string{"run", "host:99999"}, "port"},
		{[]string{"run", "host:1", "-p", "2"}, "-p says 2"},
		{[]string{"run", "--nosuchflag"}, "unknown flag"},
		{[]string{"serve", "--listen", "a:b:c"}, "--listen"},
		{[]string{"serve", "--max-tests", "0"}, "--max-tests"},
		{[]string{"serve", "--log-format", "xml"}, "--log-format"},
		{[]string{"serve", "extra"}, "no arguments"},
	})
}

// usageCase is a command line and a part of the usage error it must give.
type usageCase struct {
	args []string
	want string
}

// checkUsageErrors runs each command line: it must exit with ExitUsage,
// one line on stderr mentioning want and nothing on stdout.
func checkUsageErrors(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := execute(t, context.Background(), tt.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, ExitUsage, errOut)
			}
			if !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr %q: want one line mentioning %q", errOut, tt.want)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
}

func TestRuntimeErrors(t *testing.T) {
	closed := testkit.FreeAddr(t)
	code, _, errOut := execute(t, context.Background(), "run", closed, "-l", "1")
	if code != ExitRuntime || !strings.Contains(errOut, "connect to") {
		t.Errorf("closed port: exit %d, stderr %q", code, errOut)
	}
}

func TestServeAndRun(t *testing.T) {
	addr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var serveErr bytes.Buffer
	go func() { done <- Main(ctx, []string{"serve", "--listen", addr}, &bytes.Buffer{}, &serveErr) }()
	// Wait for the listener.
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, args := range [][]string{
		{"run", addr, "-l", "0.3", "-t", "tcp_maerts", "-P", "4"},
		{"run", "127.0.0.1", "-p", addr[strings.LastIndex(addr, ":")+1:], "-l", "0.3", "-R"},
	} {
		code, out, errOut := execute(t, context.Background(), args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if !strings.Contains(out, "server->client") {
			t.Errorf("%v: output:\n%s", args, out)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("serve exit %d: %s", code, serveErr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	for _, want := range []string{"listening", "test done", "TCP_MAERTS"} {
		if !strings.Contains(serveErr.String(), want) {
			t.Errorf("serve log lacks %q:\n%s", want, serveErr.String())
		}
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in       string
		port     int
		portSet  bool
		wantHost string
		wantPort int
		wantErr  bool
	}{
		{in: "", port: 7575, wantHost: "", wantPort: 7575},
		{in: "host", port: 7575, wantHost: "host", wantPort: 7575},
		{in: "host:9000", port: 7575, wantHost: "host", wantPort: 9000},
		{in: "10.0.0.1", port: 1, wantHost: "10.0.0.1", wantPort: 1},
		{in: "::1", port: 7575, wantHost: "::1", wantPort: 7575},
		{in: "[::1]", port: 7575, wantHost: "::1", wantPort: 7575},
		{in: "[::1]:9000", port: 7575, wantHost: "::1", wantPort: 9000},
		{in: "host:9000", port: 9000, portSet: true, wantHost: "host", wantPort: 9000},
		{in: "host:9000", port: 9001, portSet: true, wantErr: true},
		{in: "host:x", port: 7575, wantErr: true},
		{in: ":9000", port: 7575, wantErr: true},
		{in: "a:b:c", port: 7575, wantErr: true},
		{in: "host", port: 0, wantErr: true},
		// An IPv6 address with a port but no brackets is refused, not
		// taken as the address ::1:7576 (issue 48).
		{in: "::1:7576", port: 7575, wantErr: true},
		{in: "fe80::1:5201", port: 7575, wantErr: true},
		{in: "[::1:7576]", port: 7575, wantHost: "::1:7576", wantPort: 7575},
		{in: "fd00::2", port: 7575, wantHost: "fd00::2", wantPort: 7575},
		{in: "fd00::1:20", port: 7575, wantHost: "fd00::1:20", wantPort: 7575},
		{in: "2001:db8:0:0:0:0:1:7576", port: 7575, wantHost: "2001:db8::1:7576", wantPort: 7575},
	}
	for _, tt := range tests {
		h, p, err := parseTarget(tt.in, tt.port, tt.portSet)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseTarget(%q): err %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && (h != tt.wantHost || p != tt.wantPort) {
			t.Errorf("parseTarget(%q) = %q %d, want %q %d", tt.in, h, p, tt.wantHost, tt.wantPort)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := execute(t, context.Background(), "version")
	if code != ExitOK || !strings.HasPrefix(out, "wirespeed ") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

// TestJSONLogDurations: a JSON log line gives a duration in seconds under
// a key that names the unit, not slog's bare nanoseconds; text keeps
// Go's "2.034s".
func TestJSONLogDurations(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{"json", `"duration_s":2.034`},
		{"text", `duration=2.034s`},
	} {
		var buf strings.Builder
		log, err := newLogger(&env{stderr: &buf}, tc.format, "info")
		if err != nil {
			t.Fatal(err)
		}
		log.Info("test done", "duration", 2034*time.Millisecond)
		if !strings.Contains(buf.String(), tc.want) || strings.Contains(buf.String(), "2034000000") {
			t.Errorf("%s log %q, want %s", tc.format, buf.String(), tc.want)
		}
	}
}
