package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"wirespeed/internal/netdev"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/testkit"

	"github.com/google/go-cmp/cmp"
)

// vethEnv is a record as sysinfo gives it for a lab's veth end.
func vethEnv() sysinfo.Env {
	return sysinfo.Env{
		Hostname:      "lab-a",
		KernelRelease: "6.18.44",
		CPU:           sysinfo.CPUInfo{Model: "Intel(R) Xeon(R) Processor", Count: 2},
		Peer:          "10.77.0.2",
		Interface: &sysinfo.Interface{
			Name: "wst-a", Index: 2, Driver: "veth", DriverVersion: "1.0", MTU: 9000,
			SpeedMbps: 10000, Duplex: "full",
			Offloads: []netdev.FeatureState{
				{Name: "rx-checksumming", On: true, Requested: true},
				{Name: "tx-checksumming", On: true, Requested: true},
				{Name: "tcp-segmentation-offload", On: false, Requested: true}, // kept off: sg is off
				{Name: "large-receive-offload", Fixed: true},
			},
			Features: []netdev.FeatureState{
				{Name: "tx-scatter-gather", On: false},
				{Name: "tx-tcp-segmentation", On: false, Requested: true},
				{Name: "rx-lro", Fixed: true},
				{Name: "highdma", On: true, Requested: true},
			},
			Qdisc: &sysinfo.Qdisc{Kind: "tbf", Handle: "1:0", RateBitsPerSecond: 1e9, BurstBytes: 500000, LimitBytes: 1125000},
		},
		CongestionControl: sysinfo.CongestionControl{Default: "cubic", Available: []string{"reno", "cubic"}},
		Sysctls: map[string][]int64{
			"net.ipv4.tcp_rmem":  {4096, 131072, 6291456},
			"net.core.rmem_max":  {212992},
			"net.core.busy_poll": {0},
		},
	}
}

func TestEnvText(t *testing.T) {
	tests := []struct {
		name string
		env  sysinfo.Env
		opts EnvOptions
	}{
		{name: "env-veth", env: vethEnv()},
		{name: "env-veth-features", env: vethEnv(), opts: EnvOptions{AllFeatures: true}},
		{name: "env-host-only", env: sysinfo.Env{Hostname: "h", CPU: sysinfo.CPUInfo{Count: 1}}},
		{name: "env-unknown-link", env: func() sysinfo.Env {
			e := vethEnv()
			e.Peer = ""
			e.Interface.SpeedMbps, e.Interface.Duplex, e.Interface.Qdisc = 0, "", nil
			e.Interface.Driver, e.Interface.DriverVersion = "", ""
			return e
		}()},
		{name: "env-governors", env: sysinfo.Env{Hostname: "h", CPU: sysinfo.CPUInfo{Count: 4},
			CPUFreq: &sysinfo.CPUFreq{Available: true, Driver: "acpi-cpufreq", Governors: map[int]string{0: "powersave", 1: "powersave", 2: "performance", 3: "powersave"}}}},
		{name: "env-no-cpufreq", env: sysinfo.Env{Hostname: "vm", CPU: sysinfo.CPUInfo{Count: 2}, CPUFreq: &sysinfo.CPUFreq{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			Env(&b, tt.env, tt.opts)
			testkit.Golden(t, tt.name+".golden", b.String())
		})
	}
}

func TestEnvJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := EnvJSON(&b, vethEnv()); err != nil {
		t.Fatal(err)
	}
	var back sysinfo.Env
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(vethEnv(), back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	testkit.Golden(t, "env-veth.json.golden", b.String())
}

func TestLab(t *testing.T) {
	var b bytes.Buffer
	Lab(&b, LabStatus{Name: "lab", MTU: 9000, RateBitsPerSecond: 1e9, Hosts: []LabHost{
		{Name: "a", Netns: "wst-lab-a", Dev: "wst-a", IPv4: "10.77.0.1", IPv6: "fd00:77::1",
			Offloads: []netdev.FeatureState{{Name: "rx-checksumming", On: true}, {Name: "tx-checksumming", On: true},
				{Name: "scatter-gather", On: true}, {Name: "tcp-segmentation-offload"}, {Name: "generic-segmentation-offload"},
				{Name: "generic-receive-offload", On: true}, {Name: "large-receive-offload", Fixed: true}}},
		{Name: "b", Netns: "wst-lab-b", Dev: "wst-b", IPv4: "10.77.0.2", IPv6: "fd00:77::2"},
	}})
	Lab(&b, LabStatus{Name: "half", Error: "namespace wst-half-b is missing"})
	Lab(&b, LabStatus{Name: "theirs", Owner: "alice (uid 1000)", Unreadable: "reading it needs root (CAP_SYS_ADMIN)"})
	Lab(&b, LabStatus{Name: "jumbo", Owner: "bob (uid 1001)", MTU: 9000})
	testkit.Golden(t, "lab-status.golden", b.String())
}
