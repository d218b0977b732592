package main

import (
	"cmp"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/zwarm/zwarm"

// The package map of the design: which zwarm packages each may import.
// Domain packages never import the terminal UI or command-line libraries.
//
// The session core is rooms, bottom up: the state dir's file primitives
// (store), the listing cache's file format (index) and the OS layer
// (proc) import no zwarm package; the worktree (workspace) and the record
// (record) sit on them; settings (config), the agent contract (agent) and
// the scheduler seam (runner) and the traces (telemetry) on the record;
// where a record changes
// (state) on those; the listing cache (listing) and the live readers
// (watch) on state; the supervisor (supervisor) beside them; and the
// Manager (sessions) on all of them but the supervisor. Above it, the
// adapters know only the contract, the record and their settings; the
// run records (orchestrator/runs) are the session core's twin; the
// dashboard's palette and keys are leaves, so drawing a status links
// neither the orchestrator nor its model SDK, and the model client knows
// sessions only by their record. The tests' world (sessions/sessionstest)
// stands on the whole core.
var allowed = map[string][]string{
	"sessions/store":     {},
	"sessions/index":     {},
	"sessions/proc":      {},
	"sessions/workspace": {"sessions/store", "sessions/proc"},
	// A record's status, whose door only the record (which embeds it), the
	// lifecycle, the listing cache and the tests' world may import.
	"sessions/internal/statusfield": {},
	"sessions/record":               {"sessions/store", "sessions/proc", "sessions/workspace", "sessions/internal/statusfield"},
	"sessions/render":               {"sessions/record", "sessions/workspace"},
	"sessions/config":               {"sessions/store", "sessions/workspace", "sessions/record"},
	"sessions/agent":                {"sessions/record", "sessions/config"},
	"sessions/runner":               {"sessions/config"},
	"sessions/telemetry":            {"sessions/record", "sessions/config"},
	"sessions/state":                {"sessions/store", "sessions/index", "sessions/proc", "sessions/workspace", "sessions/record", "sessions/config", "sessions/agent", "sessions/internal/statusfield"},
	"sessions/listing":              {"sessions/store", "sessions/index", "sessions/workspace", "sessions/record", "sessions/state", "sessions/internal/statusfield"},
	"sessions/watch":                {"sessions/store", "sessions/proc", "sessions/record", "sessions/config", "sessions/agent", "sessions/runner", "sessions/state", "sessions/listing", "sessions/telemetry"},
	"sessions/supervisor":           {"sessions/store", "sessions/proc", "sessions/workspace", "sessions/record", "sessions/config", "sessions/agent", "sessions/state", "sessions/telemetry"},
	"sessions":                      rooms[:len(rooms)-1],
	// The tests' stand-ins and their world, which plays zwarm __supervise.
	"sessions/sessionstest": append(core(), "sessions/supervisor", "sessions/internal/statusfield"),
	"adapters/":             {"sessions/agent", "sessions/record", "sessions/config"},
	"adapters":              {"adapters/", "sessions/agent", "sessions/record", "sessions/config"},
	"watchers":              core(),
	"orchestrator/runs":     {"sessions", "sessions/store", "sessions/proc", "sessions/record", "sessions/config", "sessions/telemetry"},
	"orchestrator/model":    {"sessions/record"},
	"orchestrator":          core("watchers", "orchestrator/runs", "orchestrator/model"),
	"tui/styles":            {"sessions/record"},
	"tui/keys":              {"sessions/record"},
	"tui":                   core("watchers", "orchestrator", "orchestrator/runs", "orchestrator/model", "tui/styles", "tui/keys"),
}

// rooms are the session core's packages, bottom up; the supervisor last.
var rooms = []string{"sessions/store", "sessions/index", "sessions/proc", "sessions/workspace", "sessions/record", "sessions/render",
	"sessions/config", "sessions/agent", "sessions/runner", "sessions/telemetry", "sessions/state", "sessions/listing", "sessions/watch", "sessions/supervisor"}

// core is what a package above the session core may import of it (the
// Manager and every room but the supervisor), and more.
func core(more ...string) []string {
	return append(append([]string{"sessions"}, rooms[:len(rooms)-1]...), more...)
}

// subtrees are the packages with a rule of their own inside a tree.
var subtrees = append(slices.Clone(rooms), "sessions/internal/statusfield", "sessions/sessionstest", "orchestrator/runs", "orchestrator/model", "tui/styles", "tui/keys")

var uiLibs = []string{"github.com/spf13/cobra", "github.com/charmbracelet/"}

func rule(pkg string) (string, bool) {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	if strings.HasPrefix(rel, "adapters/") {
		return "adapters/", true
	}
	for _, sub := range subtrees {
		if rel == sub || strings.HasPrefix(rel, sub+"/") {
			return sub, true
		}
	}
	first := strings.SplitN(rel, "/", 2)[0]
	_, ok := allowed[first]
	return first, ok
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-buildvcs=false", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v%s", err, stderrOf(err))
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := f[0]
		if !strings.HasPrefix(pkg, module+"/") || strings.Contains(pkg, "/internal/") {
			continue
		}
		r, ok := rule(pkg)
		if !ok {
			continue
		}
		checked++
		for _, imp := range f[1:] {
			if r != "tui" && !strings.HasPrefix(r, "tui/") {
				for _, ui := range uiLibs {
					if strings.HasPrefix(imp, ui) {
						t.Errorf("%s imports %s: domain packages stay free of UI and CLI libraries", pkg, imp)
					}
				}
			}
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			ir, _ := rule(imp)
			if ir == r && r != "adapters/" {
				continue // within one package tree
			}
			ok := false
			for _, a := range allowed[r] {
				// An adapter may use the helpers the adapters share
				// (adapters/internal/...), never another adapter.
				if a == ir || r == "adapters/" && ir == "adapters/" && (imp == pkg || strings.HasPrefix(imp, module+"/adapters/internal/")) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports %s, which the package map does not allow", pkg, imp)
			}
		}
	}
	if checked < 3 {
		t.Fatalf("checked only %d packages", checked)
	}
}

// nonStdDeps lists the packages outside the standard library that pkgs
// link.
func nonStdDeps(t *testing.T, pkgs ...string) map[string]bool {
	t.Helper()
	args := append([]string{"list", "-buildvcs=false", "-deps", "-f", `{{if not .Standard}}{{.ImportPath}}{{end}}`}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v%s", err, stderrOf(err))
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	return deps
}

// The run records link what the session core links and nothing more; the
// palette and the keys link no model SDK.
func TestLeavesLinkLittle(t *testing.T) {
	core := nonStdDeps(t, module+"/sessions")
	for d := range nonStdDeps(t, module+"/orchestrator/runs") {
		if !core[d] && d != module+"/orchestrator/runs" && !strings.HasPrefix(d, module+"/orchestrator/runs/") {
			t.Errorf("orchestrator/runs links %s, which the session core does not", d)
		}
	}
	for d := range nonStdDeps(t, module+"/tui/styles", module+"/tui/keys") {
		if strings.HasPrefix(d, module+"/orchestrator") || strings.Contains(d, "openai") {
			t.Errorf("the dashboard's palette or keys link %s", d)
		}
	}
}

// The supervisor is the body of `zwarm __supervise` alone: no package
// imports it but this command, and no file of this command but the one
// that defines `__supervise`.
func TestOnlySuperviseImportsTheSupervisor(t *testing.T) {
	const supervisor = module + "/sessions/supervisor"
	out, err := exec.Command("go", "list", "-buildvcs=false", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v%s", err, stderrOf(err))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			// The orchestrator's test environment stands in for `zwarm
			// __supervise` in the test binaries it serves.
			if imp == supervisor && f[0] != module+"/cmd/zwarm" && f[0] != module+"/sessions/sessionstest/testworld" {
				t.Errorf("%s imports %s: only `zwarm __supervise` may", f[0], imp)
			}
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "supervise.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == supervisor {
				t.Errorf("%s imports %s: only supervise.go, the `__supervise` command, may", name, p)
			}
		}
	}
}

// Every package's init runs at every zwarm start, whatever the command.
// These do work at init that no command needs: the clipboard package looks
// for clipboard programs along PATH (some fifty file lookups); the SDK's
// root package registers the types of every OpenAI API (0.75 ms), grpc,
// which otlptracehttp links, its codecs, logs and channelz (0.9 ms with
// its gateway); protobuf, which the SDK's otlptrace links, its generated
// OTLP types and a hash of the zwarm binary (0.25 ms);
// docs/performance.md. A path ending in /... is the
// package and every one below it, as go list reads it (openai-go's
// responses package, below its root, is the one zwarm calls).
var heavyInit = []string{"github.com/atotto/clipboard", "github.com/openai/openai-go/v3", "google.golang.org/grpc/...",
	"google.golang.org/protobuf/...", "go.opentelemetry.io/proto/...", "go.opentelemetry.io/otel/exporters/otlp/..."}

func TestNoDependencyWorksAtStartup(t *testing.T) {
	out, err := exec.Command("go", "list", "-buildvcs=false", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v%s", err, stderrOf(err))
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, h := range heavyInit {
			if tree, ok := strings.CutSuffix(h, "/..."); dep == h || ok && (dep == tree || strings.HasPrefix(dep, tree+"/")) {
				t.Errorf("zwarm links %s (%s), whose init runs at every start", dep, h)
			}
		}
	}
}

// stderrOf is what a failed command said, for its test's failure.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return "\n" + string(ee.Stderr)
	}
	return ""
}

// The README installs zwarm with CGO_ENABLED=0, for a static binary that
// runs on compute nodes whatever their C library: no package zwarm links
// may need cgo to build, nor lose what zwarm uses of it without (go list
// leaves a package that cannot build so out, with its error).
func TestZwarmBuildsWithoutCgo(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-buildvcs=false", "-deps", "-f", `{{.ImportPath}} {{if .Error}}{{.Error}}{{end}}{{range .DepsErrors}}{{.}}{{end}}`, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list with CGO_ENABLED=0: %v%s", err, stderrOf(err))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, problem, _ := strings.Cut(line, " ")
		if problem != "" || pkg == "runtime/cgo" {
			t.Errorf("without cgo, %s: %s", pkg, cmp.Or(problem, "linked"))
		}
	}
}
