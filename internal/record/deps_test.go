package record

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDatabaseDriver: the packages that read results but never open
// an archive link no database driver: their rows, filters and
// environments are record's, and the archive reaches them through
// interfaces (history.Archive, dashboard.Archive). Only archive (and
// cli, which opens it) links modernc.org/sqlite and pgx.
func TestNoDatabaseDriver(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list dependencies with")
	}
	for _, pkg := range []string{"record", "history", "report", "comparison", "dashboard", "exporter"} {
		out, err := exec.Command("go", "list", "-deps", "wirespeed/internal/"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "modernc.org/sqlite") || strings.HasPrefix(dep, "github.com/jackc/pgx") || dep == "wirespeed/internal/archive" {
				t.Errorf("%s links %s, though it opens no database", pkg, dep)
			}
		}
	}
}
