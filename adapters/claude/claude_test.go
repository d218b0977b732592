package claude

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
)

func stateWith(t *testing.T, claudeTOML string) string {
	t.Helper()
	dir := t.TempDir()
	if claudeTOML != "" {
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(claudeTOML), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCommandLines(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	req := agent.TurnRequest{StateDir: stateWith(t, ""), Prompt: "-v is broken", Model: "sonnet", WorkingDir: "/w"}
	cmd, err := New().Command(req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
		"--model", "sonnet", "--permission-mode", "acceptEdits"}
	if cmd.Path != "/bin/true" || cmd.Dir != "/w" || !reflect.DeepEqual(cmd.Args, want) || cmd.Input == nil {
		t.Fatalf("start: %q in %s (live %v)", cmd.Args, cmd.Dir, cmd.Input != nil)
	}
	var msg struct {
		Type    string `json:"type"`
		Message struct {
			Role    string `json:"role"`
			Content []struct{ Type, Text string }
		} `json:"message"`
	}
	line := cmd.Input("-v is broken\nand more")
	if err := json.Unmarshal(line, &msg); err != nil || line[len(line)-1] != '\n' || strings.Count(string(line), "\n") != 1 {
		t.Fatalf("input line %q: %v", line, err)
	}
	if msg.Type != "user" || msg.Message.Role != "user" || msg.Message.Content[0].Text != "-v is broken\nand more" {
		t.Fatalf("input %+v", msg)
	}

	req.ThreadID, req.Sandbox = "c85d04b6", DangerFullAccess
	cmd, _ = New().Command(req)
	want = []string{"-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
		"--resume", "c85d04b6", "--model", "sonnet", "--dangerously-skip-permissions"}
	if !reflect.DeepEqual(cmd.Args, want) {
		t.Fatalf("resume: %q", cmd.Args)
	}

	req.Sandbox = "yolo"
	if _, err := New().Command(req); !errorsIs(err, config.ErrInvalidRequest) {
		t.Fatalf("unknown permission mode: %v", err)
	}
}

func TestSettings(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	state := stateWith(t, "model = \"opus\"\nfull_danger = true\nlive_input = false\nargs = [\"--max-turns\", \"30\"]\n")
	if m := New().DefaultModel(state); m != "opus" {
		t.Fatalf("default model %q", m)
	}
	cmd, err := New().Command(agent.TurnRequest{StateDir: state, Prompt: "-x", Model: "opus", WorkingDir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "opus",
		"--dangerously-skip-permissions", "--max-turns", "30"}
	if !reflect.DeepEqual(cmd.Args, want) || cmd.Input != nil || string(cmd.Stdin) != "-x" {
		t.Fatalf("%q live=%v stdin %q", cmd.Args, cmd.Input != nil, cmd.Stdin)
	}
	_, err = New().Command(agent.TurnRequest{StateDir: stateWith(t, "modle = 1\n")})
	if err == nil || !strings.Contains(err.Error(), "modle") || !strings.Contains(err.Error(), ConfigFile) {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestMissingBinarySaysHowToInstall(t *testing.T) {
	t.Setenv(BinaryEnv, "")
	t.Setenv("PATH", t.TempDir())
	_, err := New().Command(agent.TurnRequest{StateDir: t.TempDir(), Prompt: "x"})
	if err == nil || !strings.Contains(err.Error(), "npm install -g @anthropic-ai/claude-code") {
		t.Fatalf("got %v", err)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestExampleSettingsLoad(t *testing.T) {
	s, err := LoadSettings("../../.zwarm-example")
	if err != nil || s.Model == "" {
		t.Fatalf("%+v %v", s, err)
	}
}

// In a worktree of its own, claude's default permissions let it run
// commands (acceptEdits alone refuses every command but a file edit); a
// permission mode the user chose is kept as it is.
func TestWorktreeLetsTheDefaultModeRunCommands(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	req := agent.TurnRequest{StateDir: stateWith(t, ""), Prompt: "p", WorkingDir: "/w", Worktree: true}
	cmd, err := New().Command(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cmd.Args, " "); !strings.HasSuffix(got, "--permission-mode acceptEdits --allowedTools Bash") {
		t.Fatalf("worktree: %s", got)
	}
	req.Sandbox = "plan"
	cmd, _ = New().Command(req)
	if got := strings.Join(cmd.Args, " "); !strings.HasSuffix(got, "--permission-mode plan") || strings.Contains(got, "allowedTools") {
		t.Fatalf("chosen mode: %s", got)
	}
	req.Sandbox, req.Worktree = "", false
	cmd, _ = New().Command(req)
	if got := strings.Join(cmd.Args, " "); strings.Contains(got, "allowedTools") {
		t.Fatalf("in place: %s", got)
	}
}

func TestDenialsReadPermissionDenials(t *testing.T) {
	got := Denials([]byte(`[{"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"go test ./..."}},` +
		`{"tool_name":"Write","tool_input":{"file_path":"/etc/x","content":"y"}},{"tool_name":"WebFetch","tool_input":{"url":"u"}}]`))
	want := []record.Denial{{Tool: "Bash", Input: "go test ./..."}, {Tool: "Write", Input: "/etc/x"}, {Tool: "WebFetch", Input: `{"url":"u"}`}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v", got)
	}
	for _, bad := range []string{``, `null`, `{}`, `[1,2]`, `"x"`} {
		if d := Denials([]byte(bad)); len(d) != 0 {
			t.Errorf("%s: %+v", bad, d)
		}
	}
}

// The sandbox levels every agent takes map onto claude's permissions:
// read-only refuses edits and commands without asking, workspace-write is
// the default, danger-full-access skips the checks.
func TestSandboxLevelsMapOntoPermissions(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	for _, tc := range []struct {
		sandbox  string
		worktree bool
		want     string
	}{
		{"read-only", false, "--permission-mode dontAsk --disallowedTools Edit,MultiEdit,Write,NotebookEdit"},
		{"read-only", true, "--permission-mode dontAsk --disallowedTools Edit,MultiEdit,Write,NotebookEdit"},
		{"workspace-write", false, "--permission-mode acceptEdits"},
		{"workspace-write", true, "--permission-mode acceptEdits --allowedTools Bash"},
		{"danger-full-access", false, "--dangerously-skip-permissions"},
	} {
		req := agent.TurnRequest{StateDir: stateWith(t, ""), Prompt: "p", WorkingDir: "/w", Worktree: tc.worktree, Sandbox: tc.sandbox}
		cmd, err := New().Command(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.sandbox, err)
		}
		if got := strings.Join(cmd.Args, " "); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%s (worktree %v): %s; want it to end in %s", tc.sandbox, tc.worktree, got, tc.want)
		}
	}
	_, err := New().Command(agent.TurnRequest{StateDir: stateWith(t, ""), Prompt: "p", WorkingDir: "/w", Sandbox: "readonly"})
	if err == nil || !strings.Contains(err.Error(), "want read-only, workspace-write, danger-full-access") {
		t.Errorf("a misspelt level: %v", err)
	}
}

// With zwarm's telemetry on, Claude Code's own telemetry goes to the same
// collector; prompts only with content.
func TestTelemetryPointsClaudeAtTheCollector(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	req := agent.TurnRequest{StateDir: stateWith(t, ""), Prompt: "p", WorkingDir: "/w",
		Telemetry: agent.Telemetry{TracesURL: "http://c:4318/v1/traces", LogsURL: "http://c:4318/v1/logs", Headers: map[string]string{"authorization": "Bearer a b"},
			ExportTimeout: 2 * time.Second}}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "")
	cmd, err := New().Command(req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CLAUDE_CODE_ENABLE_TELEMETRY=1", "OTEL_METRICS_EXPORTER=otlp", "OTEL_LOGS_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20a%20b",
		"OTEL_EXPORTER_OTLP_TIMEOUT=2000"}
	if !reflect.DeepEqual(cmd.Env, want) {
		t.Fatalf("env %q\nwant %q", cmd.Env, want)
	}
	req.Telemetry = agent.Telemetry{}
	if cmd, _ := New().Command(req); len(cmd.Env) != 0 {
		t.Fatalf("telemetry off, env %q", cmd.Env)
	}
}
