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

// purePackages compute or render and keep no state outside their
// arguments: no sockets, no namespaces, no database. Each is said pure
// in docs/architecture.md, and TestNeverImports holds it to that: none
// imports archive, engine or lab, nor links a database driver. The order
// test alone would not: any new import sideways fits some order.
var purePackages = map[string]string{
	"stats":      "statistics over numbers: no I/O, no clock",
	"units":      "parsing and formatting quantities",
	"spec":       "what to run: plain data every package reads",
	"result":     "the results schema and the arithmetic that joins and averages it",
	"report":     "renders results for people: it formats what others computed",
	"history":    "archived results as series and their change points: it reads rows, it opens nothing",
	"comparison": "documents' points matched and tested: the figures in, the verdicts out",
	"limit":      "rules over a joined result",
	"iterate":    "repeating a measurement given as a function, and deciding when to stop",
}

// neverImported are the packages no pure package imports, with why.
var neverImported = map[string]string{
	"internal/archive": "the archive is storage; a pure package takes its rows as values",
	"internal/engine":  "the data path's sockets and loops",
	"internal/lab":     "test hosts in network namespaces",
}

// databaseDrivers are the import paths (prefixes) of the database
// drivers the archive uses, or could: no pure package links one.
var databaseDrivers = []string{"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/lib/pq", "github.com/mattn/go-sqlite3"}

// TestNeverImports holds the rules the import order cannot: the pure
// packages (purePackages) never import archive, engine or lab, nor link
// a database driver through any package; endpoint, the production data
// path, never links lab (a routed lab's router comes in its Config); and
// report never links gonum/plot (plots are internal/plot's).
func TestNeverImports(t *testing.T) {
	imports := moduleImports(t)
	for pkg := range purePackages {
		p := "internal/" + pkg
		if _, ok := imports[p]; !ok {
			t.Errorf("pure package %s has no Go files: update purePackages", p)
			continue
		}
		for _, imp := range imports[p] {
			if why, never := neverImported[imp]; never && !pureExceptions[p+" "+imp] {
				t.Errorf("%s imports %s, and a pure package (%s) never does: %s", p, imp, purePackages[pkg], why)
			}
		}
		for _, d := range databaseDrivers {
			if pureExceptions[p+" "+d] {
				continue
			}
			for _, dep := range linked(imports, p) {
				if dep == d || strings.HasPrefix(dep, d+"/") {
					t.Errorf("%s links the database driver %s, and a pure package (%s) never does", p, dep, purePackages[pkg])
					break
				}
			}
		}
	}
	for _, rule := range []struct{ pkg, never, why string }{
		{"internal/endpoint", "internal/lab", "the data path does not ask whether it runs in a test lab: lab run passes a router's egresses in its Config"},
		{"internal/report", "gonum.org/v1/plot", "the plots are internal/plot's, so what prints text does not carry gonum/plot"},
	} {
		for _, dep := range linked(imports, rule.pkg) {
			if dep == rule.never || strings.HasPrefix(dep, rule.never+"/") {
				t.Errorf("%s links %s: %s", rule.pkg, dep, rule.why)
			}
		}
	}
}

// pureExceptions are the pure packages' imports that break a rule today,
// as "PKG IMPORT" (a driver by its prefix in databaseDrivers), each with
// the change that removes it.
var pureExceptions = map[string]bool{}

// moduleImports reads the imports of every package under internal/ and
// of cmd/wirespeed from their non-test files, whatever their build
// constraints: "internal/x" (wirespeed's, without the module) or the
// import path.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	const root = "../.."
	dirs, err := filepath.Glob(filepath.Join(root, "internal/*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, dir := range append(dirs, filepath.Join(root, "cmd/wirespeed")) {
		pkg, _ := filepath.Rel(root, dir)
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := out[pkg]; !ok {
				out[pkg] = nil
			}
			for _, is := range af.Imports {
				p, _ := strconv.Unquote(is.Path.Value)
				out[pkg] = append(out[pkg], strings.TrimPrefix(p, "wirespeed/"))
			}
		}
	}
	return out
}

// linked returns every import path pkg links: its imports, theirs, and
// so on through wirespeed's packages (another module's own imports are
// not followed: the drivers are imported by wirespeed's code).
func linked(imports map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(p string)
	walk = func(p string) {
		for _, imp := range imports[p] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			out = append(out, imp)
			walk(imp)
		}
	}
	walk(pkg)
	return out
}
