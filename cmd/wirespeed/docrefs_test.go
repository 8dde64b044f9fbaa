package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocReferences keeps what docs/*.md name true: every backticked
// repository path (`internal/cli/run.go`, or `cli/run.go` under
// internal/) exists, every backticked bare file name (`admission.go`)
// is the name of a file somewhere in the repository or one the page's
// own code blocks make or run (a cookbook's script), every backticked
// `package.Name` of a wirespeed
// package is declared in it (a function, type, variable, constant or
// method), and every Markdown file a page names is in the repository.
// A path right after another project's name ("tailscale's `...`") is
// that project's.
func TestDocReferences(t *testing.T) {
	const root = "../.."
	pages, err := filepath.Glob(filepath.Join(root, "docs/*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md found (%v)", err)
	}
	decls := map[string]map[string]bool{} // package name -> declared names
	dirs, _ := filepath.Glob(filepath.Join(root, "internal/*"))
	for _, dir := range dirs {
		names := map[string]bool{}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range af.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					names[d.Name.Name] = true
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							names[s.Name.Name] = true
						case *ast.ValueSpec:
							for _, n := range s.Names {
								names[n.Name] = true
							}
						}
					}
				}
			}
		}
		if len(files) > 0 {
			decls[filepath.Base(dir)] = names
		}
	}

	// Every file's name, for the bare ones a page names.
	base := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		base[d.Name()] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	code := regexp.MustCompile("`([^`\n]+)`")
	path := regexp.MustCompile(`^\.?[a-z][a-z0-9_.-]*(/[A-Za-z0-9_.-]+)+\.(go|md|sh|yml|yaml|json|golden|service)$`)
	bare := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*\.(go|sh|yml|yaml|json|golden|service)$`)
	ident := regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)`)
	owner := regexp.MustCompile(`([A-Za-z0-9_-]+)'s\s*$`)
	mdFile := regexp.MustCompile(`(^|[\s(\[])([A-Za-z0-9_./-]*[A-Za-z0-9_]\.md)\b`)
	exists := func(p string, under ...string) bool {
		for _, dir := range under {
			if _, err := os.Stat(filepath.Join(root, dir, p)); err == nil {
				return true
			}
		}
		return false
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := "docs/" + filepath.Base(page)
		// What the page's code blocks hold: a file they make is the
		// reader's, not the repository's.
		var blocks strings.Builder
		inBlock := false
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
			} else if inBlock {
				blocks.WriteString(line + "\n")
			}
		}
		for i, line := range strings.Split(string(b), "\n") {
			at := func(format string, a ...any) {
				t.Helper()
				t.Errorf("%s:%d: "+format, append([]any{name, i + 1}, a...)...)
			}
			for _, m := range code.FindAllStringSubmatchIndex(line, -1) {
				s := line[m[2]:m[3]]
				// "tailscale's `cli/netcheck.go`": another project's file.
				other := owner.FindStringSubmatch(line[:m[0]])
				switch {
				case strings.Contains(s, "://"):
				case other != nil && decls[other[1]] == nil && !exists(other[1], ".", "internal"):
				case path.MatchString(s):
					if !exists(s, ".", "internal", "docs") {
						at("`%s` is not a file of the repository (from its root, internal/ or docs/)", s)
					}
				case bare.MatchString(s):
					if !base[s] && !strings.Contains(blocks.String(), s) {
						at("`%s` is no file's name in the repository", s)
					}
				case ident.MatchString(s):
					id := ident.FindStringSubmatch(s)
					names, ok := decls[id[1]]
					if ok && !names[id[2]] {
						at("`%s`: package %s declares no %s", s, id[1], id[2])
					}
				}
			}
			for _, m := range mdFile.FindAllStringSubmatch(line, -1) {
				if strings.Contains(line, "://"+m[2]) || strings.Contains(m[2], "*") {
					continue
				}
				if !exists(m[2], ".", "docs") {
					at("%s is not in the repository: name a page of it, or say what it holds", m[2])
				}
			}
		}
	}
}

// TestSerialFirst keeps .ci/run's way of finding the rate tests true: a
// test that calls testkit.Serial(t) calls it as its first statement, on
// the line after "func Test..." (what .ci/run greps for), so no rate
// test runs nowhere in CI.
func TestSerialFirst(t *testing.T) {
	const root = "../.."
	n := 0
	for _, top := range []string{"cmd", "internal", "bench"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range af.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
					continue
				}
				ast.Inspect(fn.Body, func(node ast.Node) bool {
					call, ok := node.(*ast.CallExpr)
					if !ok || !isSerial(call) {
						return true
					}
					n++
					first := fn.Body.List[0]
					if es, ok := first.(*ast.ExprStmt); !ok || es.X != call || fset.Position(call.Pos()).Line != fset.Position(fn.Body.Lbrace).Line+1 {
						t.Errorf("%s: %s calls testkit.Serial(t) but not as its first statement: move it first, or .ci/run never runs it",
							fset.Position(call.Pos()), fn.Name.Name)
					}
					return false
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 5 {
		t.Fatalf("found %d calls of testkit.Serial(t); has it been renamed?", n)
	}
}

func isSerial(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Serial" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testkit"
}

// TestNoTrackerReferences: production code says why in its own words; a
// comment does not send the reader to an issue tracker outside the
// repository ("(issue 19)"). Links to another project's issues (a Go
// bug a workaround waits for) are fine.
func TestNoTrackerReferences(t *testing.T) {
	const root = "../.."
	ref := regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)
	for _, top := range []string{"cmd", "internal", "bench"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				if ref.MatchString(line) && !strings.Contains(line, "/issue") && !strings.Contains(line, "/issues/") {
					t.Errorf("%s:%d: %s: say the reason, not the issue number", path, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestEnginePortableTag: every Linux file of the engine steps aside for
// engine_other.go under -tags wirespeed_portable, so .ci/run can test the
// portable loops on Linux; a new *_linux.go without the tag breaks that
// build.
func TestEnginePortableTag(t *testing.T) {
	files, err := filepath.Glob("../../internal/engine/*_linux*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Linux files in internal/engine (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "//go:build !wirespeed_portable\n") {
			t.Errorf("%s: start it with //go:build !wirespeed_portable (engine_other.go stands in for it under that tag)", f)
		}
	}
}
