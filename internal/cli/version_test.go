package cli

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "devel"},
		{"go install @version", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.2"}}, "v1.4.2"},
		{"checkout, clean", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("21092a13bb3753be2faa45ba3c84c3f7ac0b5557", "false")}, "devel-21092a13bb37"},
		{"checkout, changed", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("21092a13bb3753be2faa45ba3c84c3f7ac0b5557", "true")}, "devel-21092a13bb37-dirty"},
		{"no vcs (go run, -buildvcs=false)", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"module version wins over vcs", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"},
			Settings: vcs("abc", "true")}, "v0.3.0"},
	}
	for _, tt := range tests {
		if got := buildVersion(tt.bi); got != tt.want {
			t.Errorf("%s: buildVersion = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVersionText checks that `wirespeed version` prints what its help
// promises: the full commit and its state, and the protocol versions.
func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
		{Key: "vcs.revision", Value: "21092a13bb3753be2faa45ba3c84c3f7ac0b5557"},
		{Key: "vcs.time", Value: "2026-12-01T11:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := versionText(buildVersion(bi), bi)
	want := `wirespeed devel-21092a13bb37-dirty
commit:           21092a13bb3753be2faa45ba3c84c3f7ac0b5557 (with uncommitted changes, committed 2026-12-01T11:00:00Z)
built with:       go1.26.8 linux/amd64
control protocol: wirespeed version 1 (accepts 1 to 1)
documents:        wirespeed/result/v1, wirespeed/mesh/v1
`
	if got != want {
		t.Errorf("version text:\n%s\nwant:\n%s", got, want)
	}
}

func TestVersionHelpMatchesOutput(t *testing.T) {
	_, help, _ := execute(t, context.Background(), "version", "--help")
	_, out, _ := execute(t, context.Background(), "version")
	if !strings.Contains(help, "protocol") || !strings.Contains(out, "control protocol: wirespeed version ") {
		t.Errorf("version --help promises protocol versions; version prints:\n%s", out)
	}
}
