package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/server"
)

// The systemd unit in deploy/systemd is checked against the command tree
// (its ExecStart with every WIRESPEED_OPTS line of the example
// environment file parses as `wirespeed serve`), for the hardening it
// promises, and by systemd-analyze verify where the machine has it.

const systemdDir = "../../deploy/systemd"

// unitFile is a systemd unit or drop-in: each section's settings in
// order, a key given twice keeping both values.
type unitFile map[string][][2]string

func (u unitFile) values(section, key string) []string {
	var out []string
	for _, kv := range u[section] {
		if kv[0] == key {
			out = append(out, kv[1])
		}
	}
	return out
}

// one returns the one value of key, failing when it is set other than once.
func (u unitFile) one(t *testing.T, section, key string) string {
	t.Helper()
	v := u.values(section, key)
	if len(v) != 1 {
		t.Fatalf("[%s] %s is set %d times, want once", section, key, len(v))
	}
	return v[0]
}

// parseUnit reads systemd's unit syntax: [Section], Key=Value, comments
// starting with # or ;, and lines continued with a trailing backslash.
func parseUnit(t *testing.T, path string) unitFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unitFile{}
	section, cont := "", ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cont != "" {
			line, cont = cont+" "+line, ""
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case strings.HasSuffix(line, `\`):
			cont = strings.TrimSuffix(line, `\`)
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			t.Fatalf("%s:%d: %q is neither a section nor Key=Value in one", path, n, line)
		}
		u[section] = append(u[section], [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return u
}

// envOpts returns every WIRESPEED_OPTS value of the environment file,
// the commented examples too.
func envOpts(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), "WIRESPEED_OPTS="); ok {
			out = append(out, v)
		}
	}
	return out
}

func TestSystemdUnit(t *testing.T) {
	unitPath := filepath.Join(systemdDir, "wirespeed.service")
	u := parseUnit(t, unitPath)
	svc := func(key string) string { return u.one(t, "Service", key) }

	// ExecStart runs `wirespeed serve` with the environment file's flags.
	exec := strings.Fields(svc("ExecStart"))
	if len(exec) < 3 || filepath.Base(exec[0]) != "wirespeed" || exec[1] != "serve" || exec[2] != "$WIRESPEED_OPTS" {
		t.Fatalf("ExecStart=%s: want /PATH/wirespeed serve $WIRESPEED_OPTS", svc("ExecStart"))
	}
	if got := svc("EnvironmentFile"); got != "-/etc/default/wirespeed" {
		t.Errorf("EnvironmentFile=%s, want -/etc/default/wirespeed (optional)", got)
	}
	envFile := filepath.Join(systemdDir, "wirespeed.env")
	if b, _ := os.ReadFile(envFile); !strings.HasPrefix(string(b), "# /etc/default/wirespeed") {
		t.Errorf("%s does not say it is /etc/default/wirespeed", envFile)
	}
	opts := envOpts(t, envFile)
	if len(opts) < 2 {
		t.Fatalf("%s: %d WIRESPEED_OPTS lines, want the default and the keyed example", envFile, len(opts))
	}
	for i, o := range opts {
		args := append(append([]string{}, exec[1:2]...), append(strings.Fields(o), exec[3:]...)...)
		cmd := parseArgs(t, envFile, args)
		if l := flagValue(cmd, "listen"); l == "" || portOf(t, envFile, l) != server.DefaultPort {
			t.Errorf("WIRESPEED_OPTS %d listens on %q, want the default port %d", i, l, server.DefaultPort)
		}
		if psk := flagValue(cmd, "psk-file"); psk != "" && psk != "/run/credentials/wirespeed.service/psk" {
			t.Errorf("WIRESPEED_OPTS %d: --psk-file %s, which the unit's DynamicUser may not read; use the credential /run/credentials/wirespeed.service/psk", i, psk)
		}
		if flagValue(cmd, "allow-netconf") != "" {
			t.Errorf("WIRESPEED_OPTS %d asks for --allow-netconf, which the unit's capabilities refuse (see allow-netconf.conf)", i)
		}
		// serve drains for --shutdown-timeout on SIGTERM: systemd must wait longer.
		drain := 10 * time.Second
		if v := flagValue(cmd, "shutdown-timeout"); v != "" {
			drain, _ = time.ParseDuration(v)
		}
		stop, err := time.ParseDuration(svc("TimeoutStopSec"))
		if err != nil || stop <= drain {
			t.Errorf("TimeoutStopSec=%s: not longer than serve's drain of %v", svc("TimeoutStopSec"), drain)
		}
	}

	// The hardening the unit promises (README, docs/systemd.md).
	for key, want := range map[string]string{
		"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "PrivateDevices": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
		"ProtectControlGroups": "yes", "RestrictNamespaces": "yes", "RestrictSUIDSGID": "yes", "LockPersonality": "yes",
		"MemoryDenyWriteExecute": "yes", "SystemCallArchitectures": "native",
		"CapabilityBoundingSet": "", "AmbientCapabilities": "", "Restart": "on-failure",
	} {
		if got := svc(key); got != want {
			t.Errorf("%s=%s, want %q", key, got, want)
		}
	}
	families := strings.Fields(svc("RestrictAddressFamilies"))
	slices.Sort(families)
	if !slices.Equal(families, []string{"AF_INET", "AF_INET6", "AF_NETLINK", "AF_UNIX"}) {
		t.Errorf("RestrictAddressFamilies=%v", families)
	}
	if f := u.values("Service", "SystemCallFilter"); len(f) == 0 || f[0] != "@system-service" {
		t.Errorf("SystemCallFilter=%v: want the @system-service allow list first", f)
	}
	if v := svc("MemoryMax"); v == "" || v == "infinity" {
		t.Errorf("MemoryMax=%q: want a bound", v)
	}
	for _, hide := range []string{"ProtectProc", "ProcSubset"} {
		if len(u.values("Service", hide)) > 0 {
			t.Errorf("%s is set: it hides /proc/stat or other processes' CPU, which serve's figures read", hide)
		}
	}
	if got := u.one(t, "Install", "WantedBy"); got != "multi-user.target" {
		t.Errorf("WantedBy=%s", got)
	}

	// The drop-in for --allow-netconf adds CAP_NET_ADMIN and nothing else.
	d := parseUnit(t, filepath.Join(systemdDir, "allow-netconf.conf"))
	if len(d["Service"]) != 2 || d.one(t, "Service", "CapabilityBoundingSet") != "CAP_NET_ADMIN" || d.one(t, "Service", "AmbientCapabilities") != "CAP_NET_ADMIN" {
		t.Errorf("allow-netconf.conf: %v; want CapabilityBoundingSet and AmbientCapabilities of CAP_NET_ADMIN only", d["Service"])
	}
}

// TestSystemdAnalyzeVerify: systemd accepts the units and the drop-in,
// every setting understood (verify only warns of a value it cannot
// parse, so what it says of wirespeed's units must be empty too), and the
// man pages their Documentation= names are ones `wirespeed man` writes
// (verify --man=yes looks them up, in the pages the install steps of
// docs/systemd.md put in place). verify also loads the units the host
// installed that the units' targets pull in (irtt.service, say): what it
// says of those is logged, not held against wirespeed's units.
func TestSystemdAnalyzeVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze on this machine (Debian package systemd)")
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("no man on this machine, which verify --man=yes runs (Debian package man-db)")
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wirespeed.service", "wirespeed-exporter.service"} {
		b, err := os.ReadFile(filepath.Join(systemdDir, name))
		if err != nil {
			t.Fatal(err)
		}
		// verify wants ExecStart's program to exist: the test binary stands in.
		unit := strings.Replace(string(b), "ExecStart=/usr/local/bin/wirespeed", "ExecStart="+exe, 1)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The man pages, as docs/systemd.md installs them (man1 under a man
	// path).
	manDir := filepath.Join(t.TempDir(), "man")
	if code, _, stderr := execute(t, context.Background(), "man", filepath.Join(manDir, "man1")); code != 0 {
		t.Fatalf("wirespeed man: exit %d: %s", code, stderr)
	}
	verify := func(name, what string) {
		cmd := exec.Command(sa, "verify", "--man=yes", filepath.Join(dir, name))
		cmd.Env = append(os.Environ(), "SYSTEMD_UNIT_PATH="+dir+":", "MANPATH="+manDir)
		out, err := cmd.CombinedOutput()
		ours, others := verifyLines(string(out), dir)
		for _, l := range others {
			t.Logf("systemd-analyze verify %s, of another unit (not wirespeed's): %s", what, l)
		}
		// An exit status with nothing said of our unit is another unit's
		// (verify fails for any unit it loaded) when it said something of
		// one; with nothing said at all, it is ours.
		if len(ours) > 0 || (err != nil && len(others) == 0) {
			t.Errorf("systemd-analyze verify %s: %v\n%s", what, err, strings.Join(ours, "\n"))
		}
	}
	verify("wirespeed-exporter.service", "wirespeed-exporter.service")
	for _, dropIn := range []bool{false, true} {
		if dropIn {
			dd := filepath.Join(dir, "wirespeed.service.d")
			os.Mkdir(dd, 0o755)
			c, _ := os.ReadFile(filepath.Join(systemdDir, "allow-netconf.conf"))
			if err := os.WriteFile(filepath.Join(dd, "allow-netconf.conf"), c, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		verify("wirespeed.service", fmt.Sprintf("wirespeed.service (drop-in %v)", dropIn))
	}
}

// verifyLines splits systemd-analyze verify's output into the lines about
// the unit under dir (its file, its name, or its man page) and the rest.
func verifyLines(out, dir string) (ours, others []string) {
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
		case strings.Contains(l, dir), strings.Contains(l, "wirespeed"):
			ours = append(ours, l)
		default:
			others = append(others, l)
		}
	}
	return ours, others
}
