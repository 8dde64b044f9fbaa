package testkit

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// update is the one -update flag of every test binary that imports
// testkit: go test ./internal/report -update rewrites the golden files
// of the packages tested.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with what the tests got")

// Golden compares got with the file testdata/<name> of the package under
// test. On a mismatch it fails t with the diff and writes what it got
// beside the golden file, with the extension .got (testdata/a.golden ->
// testdata/a.got, ignored by git). With -update it writes got as the
// golden file instead.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test %s -update to create it)", err, packageDir())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		gotPath := strings.TrimSuffix(path, filepath.Ext(path)) + ".got"
		if err := os.WriteFile(gotPath, []byte(got), 0o644); err != nil {
			t.Errorf("write %s: %v", gotPath, err)
		}
		t.Errorf("%s differs (-want +got), wrote %s; go test %s -update accepts it:\n%s", path, gotPath, packageDir(), diff)
	}
}

// packageDir is the package under test's directory as go test takes it
// ("./internal/report"), or "." when the module's root is not found.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}

// CheckWidth fails t for every line of text wider than width columns
// (runes), naming the line: what a person reads in a terminal of that
// width must not wrap there.
func CheckWidth(t testing.TB, name, text string, width int) {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > width {
			t.Errorf("%s:%d is %d columns, more than %d:\n%s", name, i+1, n, width, l)
		}
	}
}
