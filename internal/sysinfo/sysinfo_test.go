package sysinfo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"wirespeed/internal/engine"

	"github.com/google/go-cmp/cmp"
)

func TestCollectFixture(t *testing.T) {
	env, warnings, err := Collect(context.Background(), Options{ProcRoot: "testdata/proc", SysRoot: "testdata/sys"})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings on a complete fixture: %q", warnings)
	}
	want := Env{
		Hostname:      "fixture-host",
		KernelRelease: "6.1.0-fixture-amd64",
		CPU:           CPUInfo{Model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", Count: 4},
		CongestionControl: CongestionControl{
			Default:   "cubic",
			Available: []string{"reno", "cubic", "bbr"},
		},
		Governor: "performance",
		Sysctls: map[string][]int64{
			"net.ipv4.tcp_rmem":        {4096, 131072, 6291456},
			"net.ipv4.tcp_wmem":        {4096, 16384, 4194304},
			"net.core.rmem_max":        {212992},
			"net.core.wmem_max":        {212992},
			"net.core.rmem_default":    {212992},
			"net.core.wmem_default":    {212992},
			"net.ipv4.tcp_mtu_probing": {1},
			"net.core.busy_poll":       {50},
			"net.core.busy_read":       {0},
			"net.core.optmem_max":      {131072},
		},
		// By the release: a fixture's features are not probed.
		DataPath: &engine.DataPathSupport{MsgZeroCopy: true, UDPGSO: true, UDPGRO: true, TCPInternalPacing: true, DefaultQdisc: "fq_codel"},
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("Collect (-want +got):\n%s", diff)
	}
}

// TestCollectPartial reads a tree where pieces are missing or malformed:
// each becomes a warning, none an error.
func TestCollectPartial(t *testing.T) {
	env, warnings, err := Collect(context.Background(), Options{ProcRoot: "testdata/proc-arm64"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CPUInfo{Model: "0xd0c", Count: 2}, env.CPU); diff != "" {
		t.Errorf("CPU (-want +got):\n%s", diff)
	}
	if env.KernelRelease != "6.6.0-arm" || env.Hostname != "" {
		t.Errorf("kernel %q hostname %q, want 6.6.0-arm and empty", env.KernelRelease, env.Hostname)
	}
	if len(env.Sysctls) != 0 {
		t.Errorf("sysctls = %v, want none", env.Sysctls)
	}
	all := strings.Join(warnings, "\n")
	for _, want := range []string{
		"hostname: testdata/proc-arm64/sys/kernel/hostname does not exist",
		`sysctl net.ipv4.tcp_rmem: "notanumber" is not a number`,
		"sysctl net.core.busy_read: not in this kernel or not visible in this network namespace",
		"congestion control:",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}

// TestGovernor: CPUs that differ give their governors sorted and
// joined; a fixture proc root without a sys root reads no governor
// (not the machine's); a sys root without cpufreq gives none.
func TestGovernor(t *testing.T) {
	if g := readGovernor("testdata/sys-mixed"); g != "performance/powersave" {
		t.Errorf("mixed governors read as %q, want performance/powersave", g)
	}
	if g := readGovernor(t.TempDir()); g != "" {
		t.Errorf("no cpufreq read as %q, want none", g)
	}
	env, _, err := Collect(context.Background(), Options{ProcRoot: "testdata/proc"})
	if err != nil || env.Governor != "" {
		t.Errorf("a fixture proc root alone: governor %q, %v; want none", env.Governor, err)
	}
	var names []string
	for _, f := range (&Env{Governor: "powersave"}).Fields() {
		names = append(names, f.Name+"="+f.Value)
	}
	if !strings.Contains(strings.Join(names, " "), "cc= governor=powersave") {
		t.Errorf("fields %v lack the governor after cc", names)
	}
}

func TestCollectNoProc(t *testing.T) {
	env, warnings, err := Collect(context.Background(), Options{ProcRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if env.CPU.Count != 0 || len(warnings) < 5 {
		t.Errorf("empty proc root: cpu %+v, %d warnings; want nothing read and a warning each", env.CPU, len(warnings))
	}
}

func TestReadCPUNotCpuinfo(t *testing.T) {
	_, err := readCPU("testdata/proc/sys/kernel/hostname")
	if err == nil || !strings.Contains(err.Error(), "no processor") {
		t.Errorf("error = %v, want a clear one", err)
	}
}

// TestErrUnsupported checks that a caller can test what the package
// returns for errors.ErrUnsupported as well as for ErrUnsupported.
func TestErrUnsupported(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", ErrUnsupported)
	if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
		t.Errorf("%v: want it to match errors.ErrUnsupported and ErrUnsupported", err)
	}
}
