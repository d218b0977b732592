package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// statusWriters are the packages that may set a session's or a turn's
// status: the lifecycle's transitions, in sessions/state. The compiler
// cannot refuse a write to an exported field elsewhere; this test does,
// with the type checker, in every package of the module (tests, which
// make records to read, aside). Besides the lifecycle, a status is only
// ever copied from what was read: the listing cache's decoder rebuilds the
// record it summarized, and the dashboard's row of a listing stands for
// its record; and the test fixtures (sessionstest, and mkstate, which
// makes state dirs for the scale benchmarks) write records as zwarm would.
var statusWriters = map[string][]string{
	module + "/sessions/state":            nil, // all of it
	module + "/sessions/listing":          {"session"},
	module + "/tui/sessionlist":           {"session"},
	module + "/sessions/sessionstest":     nil,
	module + "/sessions/internal/mkstate": nil,
}

func TestOnlyTheLifecycleChangesAStatus(t *testing.T) {
	out, err := exec.Command("go", "list", "-buildvcs=false", "-export", "-deps", "-f",
		"{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v%s", err, stderrOf(err))
	}
	exports := map[string]string{}
	type pkg struct{ path, dir, files string }
	var mine []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		exports[f[0]] = f[1]
		if strings.HasPrefix(f[0], module+"/") && f[3] != "" {
			mine = append(mine, pkg{f[0], f[2], f[3]})
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	rec, err := imp.Import(module + "/sessions/record")
	if err != nil {
		t.Fatal(err)
	}
	status := map[*types.Var]string{}
	for _, typ := range []string{"Session", "Turn"} {
		st := rec.Scope().Lookup(typ).Type().Underlying().(*types.Struct)
		for i := range st.NumFields() {
			if st.Field(i).Name() == "Status" {
				status[st.Field(i)] = typ
			}
		}
	}
	if len(status) != 2 {
		t.Fatalf("found %d Status fields in the record, want Session's and Turn's", len(status))
	}
	checked := 0
	for _, p := range mine {
		funcs, exempt := statusWriters[p.path]
		if exempt && funcs == nil {
			continue
		}
		var files []*ast.File
		for _, name := range strings.Split(p.files, ",") {
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
		if _, err := (&types.Config{Importer: imp}).Check(p.path, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.path, err)
		}
		checked++
		written := func(e ast.Expr) (string, bool) {
			se, ok := ast.Unparen(e).(*ast.SelectorExpr)
			if !ok || info.Selections[se] == nil {
				return "", false
			}
			v, ok := info.Selections[se].Obj().(*types.Var)
			typ, is := status[v]
			return typ, ok && is
		}
		for _, f := range files {
			var in string // the function the node is in
			ast.Inspect(f, func(n ast.Node) bool {
				if fd, ok := n.(*ast.FuncDecl); ok {
					in = fd.Name.Name
				}
				if slices.Contains(funcs, in) {
					return true
				}
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if typ, ok := written(lhs); ok {
							t.Errorf("%s: sets a %s's status: only the lifecycle (sessions/state) changes one", fset.Position(lhs.Pos()), typ)
						}
					}
				case *ast.UnaryExpr:
					if typ, ok := written(n.X); ok && n.Op == token.AND {
						t.Errorf("%s: takes the address of a %s's status: only the lifecycle (sessions/state) changes one", fset.Position(n.Pos()), typ)
					}
				case *ast.CompositeLit:
					tv := info.Types[n]
					named, ok := tv.Type.(*types.Named)
					if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != rec.Path() {
						return true
					}
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Status" && (named.Obj().Name() == "Session" || named.Obj().Name() == "Turn") {
								t.Errorf("%s: makes a %s with a status: only the lifecycle (sessions/state) sets one", fset.Position(kv.Pos()), named.Obj().Name())
							}
						}
					}
				}
				return true
			})
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d packages", checked)
	}
}
