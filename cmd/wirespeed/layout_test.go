package main

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureImportOrder keeps docs/architecture.md's package list
// true: every package under internal/ is listed, and each imports only
// packages listed below it, or spec (plain data every package may read),
// as the page says.
func TestArchitectureImportOrder(t *testing.T) {
	const root = "../.."
	f, err := os.Open(filepath.Join(root, "docs/architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entry := regexp.MustCompile(`^(cmd/wirespeed|internal/[a-z0-9]+)/\s`)
	pos := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := entry.FindStringSubmatch(sc.Text()); m != nil {
			if _, dup := pos[m[1]]; !dup {
				pos[m[1]] = len(pos)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(pos) < 10 {
		t.Fatalf("found %d packages in the list of docs/architecture.md; has its format changed?", len(pos))
	}

	dirs, err := filepath.Glob(filepath.Join(root, "internal/*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(dirs, filepath.Join(root, "cmd/wirespeed")) {
		pkg, _ := filepath.Rel(root, dir)
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		var imports []string
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, is := range af.Imports {
				p, _ := strconv.Unquote(is.Path.Value)
				if rest, ok := strings.CutPrefix(p, "wirespeed/"); ok {
					imports = append(imports, rest)
				}
			}
		}
		if len(files) == 0 {
			continue
		}
		at, listed := pos[pkg]
		if !listed {
			t.Errorf("%s is not in the package list of docs/architecture.md", pkg)
			continue
		}
		for _, imp := range imports {
			if imp == "internal/spec" {
				continue
			}
			if p, ok := pos[imp]; ok && p <= at {
				t.Errorf("%s imports %s, listed above it in docs/architecture.md: move one, or say there why not", pkg, imp)
			}
		}
	}
}

// TestProcfsOnlyInMeasure keeps procfs paths in one package: outside
// internal/measure no code names "/proc" in a string; it takes a proc root
// (measure.DefaultProcRoot by default) so tests can feed fixture trees.
func TestProcfsOnlyInMeasure(t *testing.T) {
	const root = "../.."
	files, err := filepath.Glob(filepath.Join(root, "internal/*/*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") || strings.Contains(file, "/internal/measure/") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, _ := strconv.Unquote(lit.Value); strings.HasPrefix(s, "/proc") {
					t.Errorf("%s names %s: take a proc root (measure.DefaultProcRoot) instead", file, lit.Value)
				}
			}
			return true
		})
	}
}

// TestTestOnlyPackages: the packages docs/architecture.md marks
// "test-only" (testkit, servertest, nstest) are imported only by _test.go
// files, or by each other, so no test helper (nor its -update flag) ends
// up in the binary.
func TestTestOnlyPackages(t *testing.T) {
	const root = "../.."
	doc, err := os.ReadFile(filepath.Join(root, "docs/architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	testOnly := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(internal/[a-z0-9]+)/\s+test-only`).FindAllStringSubmatch(string(doc), -1) {
		testOnly["wirespeed/"+m[1]] = true
	}
	for _, want := range []string{"testkit", "servertest", "nstest"} {
		if !testOnly["wirespeed/internal/"+want] {
			t.Errorf("docs/architecture.md does not list internal/%s as test-only", want)
		}
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, is := range af.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if testOnly[p] && !testOnly["wirespeed/"+filepath.ToSlash(rel)] {
				t.Errorf("%s imports %s, a test-only package: only _test.go files may", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
