package main

import (
	"encoding/json"
	"go/ast"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A record's status lives in sessions/internal/statusfield, embedded in
// record.Session and record.Turn under an unexported name and read through
// their Status methods, so the compiler refuses a write anywhere else. These
// tests check that it does, and who may use the door.

// TestTheCompilerKeepsAStatusToTheLifecycle builds, as a package of the
// module outside sessions/, code that tries each way of changing a status,
// and wants the compiler to refuse every one; code that only reads one
// builds.
func TestTheCompilerKeepsAStatusToTheLifecycle(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	build := func(t *testing.T, code string) (string, error) {
		t.Helper()
		src := filepath.Join(t.TempDir(), "probe.go")
		if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		ov, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, "tui", "zzstatusprobe", "probe.go"): src}})
		overlay := filepath.Join(t.TempDir(), "overlay.json")
		if err := os.WriteFile(overlay, ov, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "build", "-buildvcs=false", "-overlay", overlay, "./tui/zzstatusprobe")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	const head = "package probe\n\nimport \"" + module + "/sessions/record\"\n\n"
	t.Run("reading", func(t *testing.T) {
		out, err := build(t, head+`func F(s record.Session, t *record.Turn) bool {
	return s.Status() == record.StatusRunning || s.Turns[0].Status().Finished() || t.Status() != ""
}
`)
		if err != nil {
			t.Fatalf("a package that reads a status does not build: %v\n%s", err, out)
		}
	})
	for _, c := range []struct{ name, stmt, want string }{
		{"assign", "s.Status = record.StatusKilled", "cannot assign to s.Status"},
		{"assign a turn's", "s.Turns[0].Status = record.StatusKilled", "cannot assign to s.Turns[0].Status"},
		{"address", "p := &s.Status; _ = p", "cannot take address of s.Status"},
		{"literal", "*s = record.Session{ID: s.ID, Status: record.StatusKilled}", "unknown field Status in struct literal of type record.Session"},
		{"turn literal", "s.Turns = append(s.Turns, record.Turn{N: 2, Status: record.StatusRunning})", "unknown field Status in struct literal of type record.Turn"},
		{"embedded field", "s.statusField.Status = record.StatusKilled", "s.statusField undefined"},
		{"embedding", "m := struct{ *record.Session }{s}; m.Status = record.StatusKilled", "cannot assign to m.Status"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := build(t, head+"func F(s *record.Session) {\n\t"+c.stmt+"\n}\n")
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("%s: built (%v), want the compiler to refuse it with %q:\n%s", c.stmt, err, c.want, out)
			}
		})
	}
	t.Run("door", func(t *testing.T) {
		out, err := build(t, head+`import "`+module+`/sessions/internal/statusfield"

func F(s *record.Session) { statusfield.Set(s, record.StatusKilled) }
`)
		if err == nil || !strings.Contains(out, "use of internal package") {
			t.Errorf("a package outside sessions/ used the status's door (%v):\n%s", err, out)
		}
	})
}

// statusChangers are the packages whose code (tests aside) may change a
// status through the door: the lifecycle, and those that make a record
// from what was read, as decoding one does: the listing cache rebuilding
// a record it summarized, and the fixtures that write state dirs as zwarm
// would (sessionstest, mkstate). The package map keeps every other
// package of sessions/ from importing the door; this test keeps the record
// itself, which must import it to embed the field, from using it.
var statusChangers = map[string]bool{
	"sessions/state":            true,
	"sessions/listing":          true,
	"sessions/sessionstest":     true,
	"sessions/internal/mkstate": true,
}

func TestOnlyTheLifecycleChangesAStatus(t *testing.T) {
	const door = module + "/sessions/internal/statusfield"
	goFiles(t, func(fset *token.FileSet, dir string, f *ast.File) {
		if dir == "sessions/internal/statusfield" {
			return
		}
		name := ""
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == door {
				name = "statusfield"
				if im.Name != nil {
					name = im.Name.Name
				}
			}
		}
		if name == "" || statusChangers[dir] {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := se.X.(*ast.Ident); ok && id.Name == name && (se.Sel.Name == "Set" || se.Sel.Name == "With") {
					t.Errorf("%s: changes a status through the door: only the lifecycle (sessions/state) changes one", fset.Position(se.Pos()))
				}
			}
			return true
		})
	})
}
