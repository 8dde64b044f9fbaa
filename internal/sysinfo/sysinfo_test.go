package sysinfo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

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
		CPUFreq:       &CPUFreq{Available: true, Driver: "intel_pstate", Governors: map[int]string{0: "performance", 1: "performance", 2: "performance", 3: "performance"}},
		CongestionControl: CongestionControl{
			Default:   "cubic",
			Available: []string{"reno", "cubic", "bbr"},
		},
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
		DataPath: &DataPathSupport{MsgZeroCopy: true, UDPGSO: true, UDPGRO: true, TCPInternalPacing: true, DefaultQdisc: "fq_codel"},
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("Collect (-want +got):\n%s", diff)
	}
}

// TestCollectPartial reads a tree where pieces are missing or malformed:
// each becomes a warning, none an error.
func TestCollectPartial(t *testing.T) {
	env, warnings, err := Collect(context.Background(), Options{ProcRoot: "testdata/proc-arm64", SysRoot: "testdata/sys-vm"})
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
	// CPUs without cpufreq (a virtual machine's): recorded as such, not
	// warned about.
	if diff := cmp.Diff(&CPUFreq{}, env.CPUFreq); diff != "" {
		t.Errorf("CPUFreq (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(warnings, "\n"), "governor") {
		t.Errorf("warnings %q name the governor of CPUs that have none", warnings)
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

func TestCollectNoProc(t *testing.T) {
	env, warnings, err := Collect(context.Background(), Options{ProcRoot: t.TempDir(), SysRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if env.CPU.Count != 0 || len(warnings) < 5 {
		t.Errorf("empty proc root: cpu %+v, %d warnings; want nothing read and a warning each", env.CPU, len(warnings))
	}
	// No sysfs: the governors are unknown, which is not "no cpufreq".
	if env.CPUFreq != nil || !strings.Contains(strings.Join(warnings, "\n"), "cpu governor: ") {
		t.Errorf("empty sys root: CPUFreq %+v, warnings %q; want none and a warning", env.CPUFreq, warnings)
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

// TestCPUFreqGovernor reads CPUs with two governors (CPU numbers past 9
// sort as numbers) and writes them as one item, as compare and
// history's change notes show them.
func TestCPUFreqGovernor(t *testing.T) {
	c := &collector{}
	f := c.readCPUFreq("testdata/sys-mixed")
	want := &CPUFreq{Available: true, Driver: "acpi-cpufreq", Governors: map[int]string{0: "powersave", 1: "powersave", 2: "performance", 10: "performance"}}
	if diff := cmp.Diff(want, f); diff != "" || len(c.warnings) > 0 {
		t.Errorf("readCPUFreq (-want +got):\n%s\nwarnings %q", diff, c.warnings)
	}
	for _, tc := range []struct {
		f    *CPUFreq
		want string
	}{
		{f, "powersave (cpu 0-1), performance (cpu 2,10)"},
		{&CPUFreq{Available: true, Governors: map[int]string{0: "schedutil", 1: "schedutil"}}, "schedutil"},
		{&CPUFreq{}, "(no cpufreq)"},
		{nil, ""},
	} {
		if got := tc.f.Governor(); got != tc.want {
			t.Errorf("Governor of %+v = %q, want %q", tc.f, got, tc.want)
		}
	}
	e := Env{CPUFreq: &CPUFreq{Available: true, Governors: map[int]string{0: "powersave"}}}
	var got []EnvField
	for _, fl := range e.Fields() {
		if fl.Name == "governor" {
			got = append(got, fl)
		}
	}
	if diff := cmp.Diff([]EnvField{{"governor", "powersave"}}, got); diff != "" {
		t.Errorf("Fields' governor (-want +got):\n%s", diff)
	}
	if got := cpuRanges([]int{0, 1, 2, 3, 6, 8, 9}); got != "0-3,6,8-9" {
		t.Errorf("cpuRanges = %q, want 0-3,6,8-9", got)
	}
}
