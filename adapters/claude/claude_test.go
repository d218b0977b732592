package claude

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
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
	req := sessions.TurnRequest{StateDir: stateWith(t, ""), Prompt: "-v is broken", Model: "sonnet", WorkingDir: "/w"}
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
	if _, err := New().Command(req); !errorsIs(err, sessions.ErrInvalidRequest) {
		t.Fatalf("unknown permission mode: %v", err)
	}
}

func TestSettings(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	state := stateWith(t, "model = \"opus\"\nfull_danger = true\nlive_input = false\nargs = [\"--max-turns\", \"30\"]\n")
	if m := New().DefaultModel(state); m != "opus" {
		t.Fatalf("default model %q", m)
	}
	cmd, err := New().Command(sessions.TurnRequest{StateDir: state, Prompt: "-x", Model: "opus", WorkingDir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "opus",
		"--dangerously-skip-permissions", "--max-turns", "30"}
	if !reflect.DeepEqual(cmd.Args, want) || cmd.Input != nil || string(cmd.Stdin) != "-x" {
		t.Fatalf("%q live=%v stdin %q", cmd.Args, cmd.Input != nil, cmd.Stdin)
	}
	_, err = New().Command(sessions.TurnRequest{StateDir: stateWith(t, "modle = 1\n")})
	if err == nil || !strings.Contains(err.Error(), "modle") || !strings.Contains(err.Error(), ConfigFile) {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestMissingBinarySaysHowToInstall(t *testing.T) {
	t.Setenv(BinaryEnv, "")
	t.Setenv("PATH", t.TempDir())
	_, err := New().Command(sessions.TurnRequest{StateDir: t.TempDir(), Prompt: "x"})
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
