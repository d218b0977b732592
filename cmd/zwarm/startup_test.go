package main

import (
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

// compilers are calls that do real work (a regexp's compilation, a
// template's parse) when a package-level variable is initialised with
// them or an init runs them: every zwarm command pays for every one at
// start, the commands that never use it included. Such a value is made on
// first use instead (sync.OnceValue).
var compilers = map[string]map[string]bool{
	"regexp":        {"MustCompile": true, "Compile": true, "MustCompilePOSIX": true, "CompilePOSIX": true},
	"text/template": {"Must": true, "New": true},
	"html/template": {"Must": true, "New": true},
}

// fixtureWriter writes the benchmarks' state dirs; it is never in zwarm.
const fixtureWriter = "sessions/internal/mkstate"

// goFiles calls fn with each non-test Go file of zwarm, parsed, and its
// package's directory from the repository's root.
func goFiles(t *testing.T, fn func(fset *token.FileSet, dir string, f *ast.File)) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		fn(fset, filepath.ToSlash(dir), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 200 {
		t.Fatalf("checked %d files: the walk missed the tree", checked)
	}
}

// compilerNames maps the names f imports the compilers' packages under to
// their paths.
func compilerNames(f *ast.File) map[string]string {
	names := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if compilers[p] == nil {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		names[name] = p
	}
	return names
}

// atStart calls fn with each call in n that runs when the package is
// initialised: not one inside a function literal, unless the literal is
// itself called there.
func atStart(n ast.Node, fn func(*ast.CallExpr)) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // runs when called, not at start
		case *ast.CallExpr:
			fn(n)
			if lit, ok := n.Fun.(*ast.FuncLit); ok {
				atStart(lit.Body, fn) // called right here: at start
				for _, a := range n.Args {
					atStart(a, fn)
				}
				return false
			}
		}
		return true
	})
}

func TestNothingIsCompiledAtStartup(t *testing.T) {
	goFiles(t, func(fset *token.FileSet, dir string, f *ast.File) {
		names := compilerNames(f)
		if len(names) == 0 || dir == fixtureWriter {
			return
		}
		check := func(call *ast.CallExpr) {
			se, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return
			}
			x, ok := se.X.(*ast.Ident)
			if !ok || names[x.Name] == "" || !compilers[names[x.Name]][se.Sel.Name] {
				return
			}
			t.Errorf("%s: %s.%s runs at every zwarm start: make it on first use (sync.OnceValue)", fset.Position(call.Pos()), names[x.Name], se.Sel.Name)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				if d.Tok == token.VAR {
					for _, spec := range d.Specs {
						for _, v := range spec.(*ast.ValueSpec).Values {
							atStart(v, check)
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					atStart(d.Body, check)
				}
			}
		}
	})
}

// A regexp made on first use is not compiled by any test of its package
// that never reaches it: each pattern given to regexp.MustCompile as a
// literal is compiled here.
func TestEveryRegexpLiteralCompiles(t *testing.T) {
	compiled := 0
	goFiles(t, func(fset *token.FileSet, _ string, f *ast.File) {
		names := compilerNames(f)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			se, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := se.X.(*ast.Ident)
			if !ok || names[x.Name] != "regexp" || !strings.HasPrefix(se.Sel.Name, "MustCompile") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			pat, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Errorf("%s: %v", fset.Position(lit.Pos()), err)
				return true
			}
			compile := regexp.Compile
			if se.Sel.Name == "MustCompilePOSIX" {
				compile = regexp.CompilePOSIX
			}
			if _, err := compile(pat); err != nil {
				t.Errorf("%s: %v", fset.Position(lit.Pos()), err)
			}
			compiled++
			return true
		})
	})
	if compiled < 15 {
		t.Fatalf("compiled %d patterns: the walk missed them", compiled)
	}
}
