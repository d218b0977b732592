package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The session core keeps its walls: the Manager's root holds the Manager
// and its API alone, and no function in it or its rooms is so long that
// its steps have no names. The figures are docs/architecture.md's.
const (
	maxRootLines = 4500
	maxFuncLines = 80
)

func TestTheSessionCoreKeepsItsShape(t *testing.T) {
	root := filepath.Join("..", "..", "sessions")
	rootLines, funcs := 0, 0
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if filepath.Dir(path) == root {
			rootLines += bytes.Count(src, []byte("\n"))
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			funcs++
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines: name its steps, at most %d lines each", fset.Position(fd.Pos()), fd.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if funcs < 500 {
		t.Fatalf("read only %d functions", funcs)
	}
	if rootLines > maxRootLines {
		t.Errorf("the sessions root is %d lines, over %d: its concerns belong in their rooms (docs/architecture.md)", rootLines, maxRootLines)
	}
}
