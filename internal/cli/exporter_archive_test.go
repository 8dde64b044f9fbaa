package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExporterArchiveFlags: the archive sink's bounds are checked before
// the exporter starts.
func TestExporterArchiveFlags(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "probes.yml")
	os.WriteFile(cfg, []byte("modules:\n  tcp: {}\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--archive-every", "500ms"}, "--archive-every 500ms must be at least 1s"},
		{[]string{"--archive-mib-per-hour", "0"}, "--archive-mib-per-hour 0 must be between 1 and"},
	} {
		args := append([]string{"exporter", "--config", cfg, "--listen", "127.0.0.1:0"}, tc.args...)
		// Were the flag taken, the exporter would serve until ctx ends.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		code, _, errOut := execute(t, ctx, args...)
		cancel()
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d: %s; want a usage error saying %q", tc.args, code, errOut, tc.want)
		}
	}
}
