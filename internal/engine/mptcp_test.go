package engine

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckMPTCP feeds fixture /proc trees: enabled, disabled and a
// kernel without the sysctl.
func TestCheckMPTCP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MPTCP is Linux's")
	}
	tree := func(v string) string {
		root := t.TempDir()
		if v != "" {
			dir := filepath.Join(root, "sys/net/mptcp")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "enabled"), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	for _, tt := range []struct {
		name, enabled, wantErr string
	}{
		{name: "enabled", enabled: "1"},
		{name: "disabled", enabled: "0", wantErr: "sysctl net.mptcp.enabled = 0"},
		{name: "no mptcp", enabled: "", wantErr: "CONFIG_MPTCP"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckMPTCP(tree(tt.enabled))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckMPTCP: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrNoMPTCP) {
				t.Fatalf("CheckMPTCP = %v, want ErrNoMPTCP saying %q", err, tt.wantErr)
			}
		})
	}
}
