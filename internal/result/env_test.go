package result

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/measure"
	"wirespeed/internal/netdev"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

func testEnv(mtu int, tso bool) *sysinfo.Env {
	return &sysinfo.Env{
		Hostname: "h", KernelRelease: "6.8.0", CPU: sysinfo.CPUInfo{Model: "cpu", Count: 2},
		CongestionControl: sysinfo.CongestionControl{Default: "cubic"},
		Interface: &sysinfo.Interface{Name: "wst-a", Driver: "veth", MTU: mtu, Qdisc: &sysinfo.Qdisc{Kind: "noqueue"},
			Offloads: []netdev.FeatureState{{Name: "tx-checksumming", On: true}, {Name: "tcp-segmentation-offload", On: tso}}},
		Sysctls: map[string][]int64{"net.ipv4.tcp_rmem": {4096, 131072, 6291456}},
	}
}

// TestJoinEnvAndChecksumWarning: Join puts each side's record in the
// result, and a side whose kernel counted checksum errors gets a warning
// that says what that usually means.
func TestJoinEnvAndChecksumWarning(t *testing.T) {
	sp := spec.Default()
	local := SideResult{Side: Local, Env: testEnv(1500, true)}
	remote := SideResult{Side: Remote, Env: testEnv(9000, false), Counters: &measure.Counters{TCP: measure.TCPCounters{InCsumErrors: 7}}}
	res := Join(sp, local, remote)
	if res.Local.Env != local.Env || res.Remote.Env != remote.Env {
		t.Error("Join did not keep the sides' records")
	}
	found := false
	for _, w := range Texts(res.Warnings) {
		if strings.HasPrefix(w, "remote side: the kernel counted 7 ") && strings.Contains(w, "InCsumErrors") {
			found = true
		}
	}
	if !found {
		t.Errorf("no checksum warning for the remote side in %q", Texts(res.Warnings))
	}
}

func TestDiffEnv(t *testing.T) {
	a, b := testEnv(1500, true), testEnv(9000, false)
	b.Sysctls["net.core.rmem_max"] = []int64{212992}
	b.Interface.Qdisc = &sysinfo.Qdisc{Kind: "tbf", RateBitsPerSecond: 20e6}
	got := DiffEnv(Remote, a, b)
	want := []EnvDiff{
		{Remote, "mtu", "1500", "9000"},
		{Remote, "qdisc", "noqueue", "tbf rate_bps=20000000"},
		{Remote, "tso", "on", "off"},
		{Remote, "net.core.rmem_max", "", "212992"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DiffEnv (-want +got):\n%s", diff)
	}
	if d := DiffEnv(Local, a, a); len(d) != 0 {
		t.Errorf("a record differs from itself: %v", d)
	}
	if d := DiffEnv(Local, nil, b); d != nil {
		t.Errorf("a missing record differs: %v", d)
	}
}

func TestRowLabel(t *testing.T) {
	got := RowLabel([]MatrixSetting{{Name: "tso", Value: "off"}, {Name: "mtu", Side: Remote, Value: "9000"}})
	if got != "tso=off remote:mtu=9000" {
		t.Errorf("RowLabel = %q", got)
	}
}
