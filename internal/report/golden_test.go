package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/<name>.golden; on a mismatch it writes
// testdata/<name>.got and prints the diff. -update rewrites the golden file.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		gotPath := filepath.Join("testdata", name+".got")
		os.WriteFile(gotPath, []byte(got), 0o644)
		t.Errorf("%s differs (-want +got), wrote %s:\n%s", path, gotPath, diff)
	}
}
