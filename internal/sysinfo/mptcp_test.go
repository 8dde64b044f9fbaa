package sysinfo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadMPTCP: net.mptcp.* from planted proc trees: a 6.18 kernel's,
// an older one's without path_manager and scheduler, and none.
func TestReadMPTCP(t *testing.T) {
	tree := func(files map[string]string) string {
		root := t.TempDir()
		dir := filepath.Join(root, "sys/net/mptcp")
		os.MkdirAll(dir, 0o755)
		for k, v := range files {
			if err := os.WriteFile(filepath.Join(dir, k), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  *MPTCP
	}{
		{"6.18", map[string]string{"enabled": "1", "path_manager": "kernel", "pm_type": "0", "scheduler": "default"},
			&MPTCP{Enabled: true, PathManager: "kernel", PMType: 0, Scheduler: "default"}},
		{"old, disabled", map[string]string{"enabled": "0", "pm_type": "1"}, &MPTCP{PMType: 1}},
		{"none", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, readMPTCP(tree(tt.files))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
