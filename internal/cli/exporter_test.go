package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"wirespeed/internal/exporter"
	"wirespeed/internal/spec"
)

// runSpec is the spec `wirespeed run` builds from args.
func runSpec(t *testing.T, args ...string) spec.Test {
	t.Helper()
	f := &runFlags{spec: spec.Default()}
	cmd := &cobra.Command{Use: "run"}
	addRunFlags(cmd, f)
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	f.changed = cmd.Flags().Changed
	sp, err := f.buildSpec()
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestExporterModulesAreRunFlags: a module's keys build the very spec run
// builds from the same flags, defaults that depend on the test included
// (UDP_STREAM's datagram size, -R), and the module's port and length
// choice come through.
func TestExporterModulesAreRunFlags(t *testing.T) {
	file := `
modules:
  udp:
    test: udp_stream
    bandwidth: 100M
    reverse: true
    length: 3s
  fq:
    fq-rate: 250M
    parallel: 2
    send-size: 64K
    cc: reno
    dscp: AF41
  rr:
    test: TCP_RR
    rr-sizes: [64, 1K]
    port: 9000
    cpu: false
`
	c, err := exporter.Parse([]byte(file), moduleBuilder(&env{}))
	if err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"udp": {"-t", "udp_stream", "-b", "100M", "-R", "-l", "3s"},
		"fq":  {"--fq-rate", "250M", "-P", "2", "-m", "64K", "--cc", "reno", "--dscp", "AF41"},
		"rr":  {"-t", "TCP_RR", "-r", "64,1K", "--cpu=false"},
	} {
		if diff := cmp.Diff(runSpec(t, args...), c.Modules[name].Plan.Test); diff != "" {
			t.Errorf("module %s differs from run %v (-run +module):\n%s", name, args, diff)
		}
	}
	if p := c.Modules["udp"].Plan; !p.LengthSet || p.Port != 7575 || p.Test.SendSize != spec.DefaultUDPSize {
		t.Errorf("udp: length set %v, port %d, send size %d", p.LengthSet, p.Port, p.Test.SendSize)
	}
	if p := c.Modules["rr"].Plan; p.LengthSet || p.Port != 9000 {
		t.Errorf("rr: length set %v, port %d; want the length fitted and port 9000", p.LengthSet, p.Port)
	}
}

// TestExporterModuleErrors: each mistake names the line, the module and
// the key, and says what to do.
func TestExporterModuleErrors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.key")
	os.WriteFile(short, []byte("tooshort"), 0o600)
	for _, c := range []struct{ module, want string }{
		{"test: TCP_SPRINT", `line 3: module "m": key "test": unknown test "TCP_SPRINT": use one of TCP_STREAM`},
		{"l: 10s", `line 3: module "m": key "l": -l is a short flag: write its long name, length`},
		{"lenght: 10s", `key "lenght": not a flag of wirespeed run`},
		{"length: ten", `line 3: module "m": key "length"`},
		{"parallel: -1", `module "m": key "parallel"`},
		{"bandwidth: 1Q", `key "bandwidth"`},
		{"json: true", `key "json": a probe answers with metrics`},
		{"tradeoff: true", `key "tradeoff": a module runs one test`},
		{"iterations: 3", `key "iterations": a probe is one run`},
		{"iperf3: true", `key "iperf3": the exporter probes wirespeed servers only`},
		{"archive: x.db", `key "archive": the exporter's own --archive`},
		{"psk-file: " + short, `line 3: module "m": key "psk-file"`},
		{"psk-file: /nonexistent/key", `key "psk-file"`},
		{"test: TCP_RR\n    fq-rate: 1G", `module "m": key "fq-rate"`},
		{"reverse: true\n    test: TCP_RR", `module "m": key "reverse": -R reverses TCP_STREAM and UDP_STREAM`},
	} {
		_, err := exporter.Parse([]byte("modules:\n  m:\n    "+c.module+"\n"), moduleBuilder(&env{}))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v\nwant %q", c.module, err, c.want)
		}
	}
}

// TestExporterConfigCheck: --config.check lists the modules and exits 0,
// or names the mistake and exits 1; bad flags are usage errors.
func TestExporterConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	os.WriteFile(good, []byte("modules:\n  tcp: {}\n  udp:\n    test: UDP_STREAM\n    length: 5s\n"), 0o600)
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("modules:\n  tcp:\n    lenght: 5s\n"), 0o600)
	code, out, _ := execute(t, context.Background(), "exporter", "--config", good, "--config.check")
	if code != 0 || out != good+": 2 modules\n  tcp: TCP_STREAM, up to 10s, fitted to the scrape\n  udp: UDP_STREAM, 5s\n" {
		t.Errorf("check of a good file: exit %d\n%s", code, out)
	}
	code, _, errOut := execute(t, context.Background(), "exporter", "--config", bad, "--config.check")
	if code != ExitRuntime || !strings.Contains(errOut, bad+`: line 3: module "tcp": key "lenght"`) {
		t.Errorf("check of a bad file: exit %d\n%s", code, errOut)
	}
	// A value run would refuse as a usage error is a bad file here: 1.
	os.WriteFile(bad, []byte("modules:\n  rr:\n    test: TCP_RR\n    fq-rate: 1G\n"), 0o600)
	code, _, errOut = execute(t, context.Background(), "exporter", "--config", bad, "--config.check")
	if code != ExitRuntime || !strings.Contains(errOut, bad+`: line 4: module "rr": key "fq-rate": --fq-rate paces the senders of stream tests`) {
		t.Errorf("check of a bad value: exit %d\n%s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exporter"}, "--config FILE is required"},
		{[]string{"exporter", "--config", good, "--allow-targets", "10.0.0.1/8"}, "has host bits set: did you mean 10.0.0.0/8?"},
		{[]string{"exporter", "--config", good, "--allow-targets", "example.org"}, "neither a CIDR"},
		{[]string{"exporter", "--config", good, "--max-concurrent", "0"}, "--max-concurrent 0 must be at least 1"},
		{[]string{"exporter", "--config", good, "--listen", "9575"}, "write HOST:PORT or :PORT"},
	} {
		code, _, errOut := execute(t, context.Background(), c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %s\nwant usage error %q", c.args, code, errOut, c.want)
		}
	}
}
