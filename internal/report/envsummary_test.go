package report

import (
	"bytes"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/sysinfo"
	"wirespeed/internal/testkit"
)

// TestTextWithEnv: a result with both sides' records shows a compact
// line per side after the figures, and a checksum-error warning at the
// end.
func TestTextWithEnv(t *testing.T) {
	doc := load(t, "stream.json")
	local := vethEnv()
	local.Interface.Name, local.Interface.MTU = "wst-b", 1500
	remote := vethEnv()
	remote.Interface.Qdisc = nil
	remote.Interface.Driver = ""
	doc.Local.Env, doc.Remote.Env = &local, &remote
	// A coded warning: its words in the golden are report's.
	doc.Warnings = append(doc.Warnings, result.Coded(result.WarnChecksumErrors, map[string]string{"side": "remote"}, map[string]float64{"in_csum_errors": 7}))
	var buf bytes.Buffer
	TextIn(&buf, doc.Result, TextOptions{Verbose: true}) // the env lines are -v's
	testkit.Golden(t, "stream-env-v.txt.golden", buf.String())
}

func TestEnvLineWithoutInterface(t *testing.T) {
	got := envLine(sysinfo.Env{KernelRelease: "6.1"}, "")
	if want := "kernel 6.1, interface unknown, cc -"; got != want {
		t.Errorf("EnvLine = %q, want %q", got, want)
	}
}
