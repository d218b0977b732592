package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compilers are calls that do real work (a regexp's compilation, a
// template's parse) when a package-level variable is initialised with
// them: every zwarm command pays for every one at start, the commands that
// never use it included. Such a variable is made on first use instead
// (sync.OnceValue).
var compilers = map[string]bool{"regexp.MustCompile": true, "regexp.Compile": true, "template.Must": true, "template.New": true}

func TestNothingIsCompiledAtStartup(t *testing.T) {
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
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "mkstate") && path != root {
			return filepath.SkipDir // mkstate: a benchmark's fixture writer, never in zwarm
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					ast.Inspect(v, func(n ast.Node) bool {
						if _, ok := n.(*ast.FuncLit); ok {
							return false // runs when called, not at start
						}
						if call, ok := n.(*ast.CallExpr); ok {
							if se, ok := call.Fun.(*ast.SelectorExpr); ok {
								if x, ok := se.X.(*ast.Ident); ok && compilers[x.Name+"."+se.Sel.Name] {
									t.Errorf("%s: a package-level %s.%s runs at every zwarm start: make it on first use (sync.OnceValue)", fset.Position(call.Pos()), x.Name, se.Sel.Name)
								}
							}
						}
						return true
					})
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk missed the tree", checked)
	}
}
