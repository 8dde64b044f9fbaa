package record

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// namedElsewhere are the packages that show, keep or compare figures:
// each takes a figure's name from the registry, never spells it.
var namedElsewhere = []string{"report", "history", "archive", "comparison", "exporter", "dashboard", "cli"}

// TestFiguresNamedOnce: no Go source of the packages that list figures
// (tests aside) spells a registry figure's name as a string literal;
// they use Figure.Name. A second spelling is a second list, which
// drifts (local_cpu, local_util_pct and "local CPU util" were once
// one figure). Struct tags are not literals here: the results
// document's keys live in package result, below the registry.
func TestFiguresNamedOnce(t *testing.T) {
	// A name of one plain word ("bytes", "lost") is also a word of
	// prose and an import path: the names checked are the compound
	// ones, which nothing but a figure is spelled like.
	names := map[string]bool{}
	for _, f := range Figures {
		if strings.Contains(f.Name, "_") {
			names[f.Name] = true
		}
	}
	for _, pkg := range namedElsewhere {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no Go files (%v)", pkg, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			tags := map[*ast.BasicLit]bool{}
			ast.Inspect(f, func(n ast.Node) bool {
				if fd, ok := n.(*ast.Field); ok && fd.Tag != nil {
					tags[fd.Tag] = true
				}
				return true
			})
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING || tags[lit] {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
					t.Errorf("%s: figure %q named by hand; use its record.Figure's Name", fset.Position(lit.Pos()), s)
				}
				return true
			})
		}
	}
}

// TestFigures: every figure has a unit, words and a reader, and no two
// share a name or a label.
func TestFigures(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Figures {
		if f.Name == "" || f.Unit == "" || f.Words == "" || f.read == nil {
			t.Errorf("figure %+v lacks a name, unit, words or reader", f)
		}
		for _, n := range []string{f.Name, f.Label} {
			if seen[n] && !(n == f.Name && n == f.Label) {
				t.Errorf("%q names two figures", n)
			}
			seen[n] = true
		}
	}
}
