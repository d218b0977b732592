package codex

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
)

func writeCodexTOML(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOverridesFlattenAtAnyDepth(t *testing.T) {
	dir := writeCodexTOML(t, `
model = "gpt-5.1-codex"
full_danger = true
model_reasoning_effort = "high"
quoted = "say \"hi\"\n"
n = 3
ratio = 0.5
whole = 2.0
on = false
list = ["a", 1]
servers = [{name = "x", port = 1}]

[features]
web_search_request = true

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:1/v1"

[a.b.c.d]
deep = "yes"
`)
	o, err := LoadOverrides(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o.Model != "gpt-5.1-codex" || !o.FullDanger {
		t.Errorf("model %q full_danger %v", o.Model, o.FullDanger)
	}
	want := []string{
		`a.b.c.d.deep="yes"`,
		`features.web_search_request=true`,
		`list=["a", 1]`,
		`model_providers.mock.base_url="http://127.0.0.1:1/v1"`,
		`model_providers.mock.name="mock"`,
		`model_reasoning_effort="high"`,
		`n=3`,
		`on=false`,
		`quoted="say \"hi\"\n"`,
		`ratio=0.5`,
		`servers=[{name = "x", port = 1}]`,
		`whole=2.0`,
	}
	if !reflect.DeepEqual(o.Flags, want) {
		t.Errorf("flags:\n got %q\nwant %q", o.Flags, want)
	}
}

// Codex takes each dot-separated piece of a -c key literally: a table name
// with a space is passed unquoted (checked against codex 0.169.0, where
// `-c 'model_providers."mock p"=...'` leaves the provider "mock p"
// undefined and `-c 'model_providers.mock p=...'` defines it), and a name
// with a dot is refused.
func TestOverrideKeysAsCodexReadsThem(t *testing.T) {
	o, err := LoadOverrides(writeCodexTOML(t, "[model_providers.\"mock p\"]\nname = \"m\"\n"))
	if err != nil || len(o.Flags) != 1 || o.Flags[0] != `model_providers.mock p.name="m"` {
		t.Fatalf("%q %v", o.Flags, err)
	}
	_, err = LoadOverrides(writeCodexTOML(t, "[model_providers.\"a.b\"]\nname = \"m\"\n"))
	if err == nil || !strings.Contains(err.Error(), `"a.b"`) || !strings.Contains(err.Error(), ConfigFile) {
		t.Fatalf("a dotted key: %v", err)
	}
}

func TestOverridesErrors(t *testing.T) {
	for _, body := range []string{"model = 3", "full_danger = \"yes\"", "x = "} {
		if _, err := LoadOverrides(writeCodexTOML(t, body)); err == nil || !strings.Contains(err.Error(), ConfigFile) {
			t.Errorf("%q: want an error naming %s, got %v", body, ConfigFile, err)
		}
	}
	if o, err := LoadOverrides(t.TempDir()); err != nil || len(o.Flags) != 0 {
		t.Errorf("missing codex.toml: %v %v", o, err)
	}
}

func TestCommandLines(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	state := writeCodexTOML(t, "[features]\nx = true\n")
	req := agent.TurnRequest{StateDir: state, Prompt: "-v is broken", Model: "gpt-5.5", WorkingDir: "/w"}
	cmd, err := New().Command(req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-c", "features.x=true", "exec", "--json", "--skip-git-repo-check", "--disable", "unbounded_connection_retries",
		"-s", "workspace-write", "-m", "gpt-5.5", "-C", "/w", "--", "-"}
	if cmd.Path != "/bin/true" || cmd.Dir != "/w" || !reflect.DeepEqual(cmd.Args, want) || string(cmd.Stdin) != "-v is broken" {
		t.Errorf("start:\n got %s %q in %s, stdin %q\nwant %q", cmd.Path, cmd.Args, cmd.Dir, cmd.Stdin, want)
	}

	req.ThreadID, req.Sandbox = "0199a213-81c0", DangerFullAccess
	cmd, err = New().Command(req)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"-c", "features.x=true", "exec", "resume", "--json", "--skip-git-repo-check", "--disable", "unbounded_connection_retries",
		"--dangerously-bypass-approvals-and-sandbox", "-m", "gpt-5.5", "--", "0199a213-81c0", "-"}
	if cmd.Dir != "/w" || !reflect.DeepEqual(cmd.Args, want) || string(cmd.Stdin) != "-v is broken" {
		t.Errorf("resume:\n got %q in %s\nwant %q", cmd.Args, cmd.Dir, want)
	}

	req.Sandbox = "read-only"
	cmd, _ = New().Command(req)
	if !strings.Contains(strings.Join(cmd.Args, " "), `-c sandbox_mode="read-only"`) {
		t.Errorf("resume read-only: %q", cmd.Args)
	}
	req.Sandbox = "yolo"
	if _, err := New().Command(req); err == nil || !strings.Contains(err.Error(), "yolo") {
		t.Errorf("unknown sandbox: %v", err)
	}
}

func TestMissingBinarySaysHowToInstall(t *testing.T) {
	t.Setenv(BinaryEnv, "")
	t.Setenv("PATH", t.TempDir())
	_, err := New().Command(agent.TurnRequest{StateDir: t.TempDir(), Prompt: "x", WorkingDir: "/"})
	if err == nil || !strings.Contains(err.Error(), "npm install -g @openai/codex") || !strings.Contains(err.Error(), `"codex"`) {
		t.Fatalf("got %v", err)
	}
	_, err = New().Command(agent.TurnRequest{StateDir: t.TempDir(), Prompt: "x", Config: config.AdapterConfig{Binary: "/nope/codex"}})
	if err == nil || !strings.Contains(err.Error(), "/nope/codex") || !strings.Contains(err.Error(), "config.toml") {
		t.Fatalf("configured binary: got %v", err)
	}
}

// A prompt over codex's limit is refused as a bad request, before a
// session is made for a turn that would fail; one at the limit, counted
// in characters, not bytes, is taken.
func TestAPromptOverCodexsLimitIsRefused(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	at := strings.Repeat("é", MaxPromptChars)
	if _, err := New().Command(agent.TurnRequest{StateDir: t.TempDir(), Prompt: at, WorkingDir: "/"}); err != nil {
		t.Fatalf("a prompt of %d characters: %v", MaxPromptChars, err)
	}
	_, err := New().Command(agent.TurnRequest{StateDir: t.TempDir(), Prompt: at + "!", WorkingDir: "/"})
	if !errors.Is(err, config.ErrInvalidRequest) || !strings.Contains(err.Error(), "at most 1048576") {
		t.Fatalf("a prompt one character over: %v", err)
	}
}

func TestExampleOverridesLoad(t *testing.T) {
	o, err := LoadOverrides("../../.zwarm-example")
	if err != nil || len(o.Flags) == 0 {
		t.Fatalf("%+v %v", o, err)
	}
}

// In a worktree under workspace-write, the parts of the git dir a commit
// needs are writable roots, added to any codex.toml names.
func TestWorktreeGitDirsAreWritableRoots(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	state := writeCodexTOML(t, "[sandbox_workspace_write]\nwritable_roots = [\"/cache\"]\nnetwork_access = true\n")
	req := agent.TurnRequest{StateDir: state, Prompt: "p", WorkingDir: "/w", Worktree: true,
		GitDirs: []string{"/r/.git/worktrees/x", "/r/.git/objects"}}
	cmd, err := New().Command(req)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cmd.Args, " ")
	if !strings.Contains(got, `-c sandbox_workspace_write.writable_roots=["/cache","/r/.git/worktrees/x","/r/.git/objects"]`) ||
		strings.Count(got, "writable_roots") != 1 || !strings.Contains(got, "sandbox_workspace_write.network_access=true") {
		t.Fatalf("args %s", got)
	}
	req.Sandbox = DangerFullAccess
	cmd, _ = New().Command(req)
	if strings.Contains(strings.Join(cmd.Args, " "), "writable_roots") {
		t.Fatalf("danger-full-access needs no roots: %q", cmd.Args)
	}
}
