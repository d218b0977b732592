package codex

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
)

// A session's reasoning effort and instructions reach codex on every turn
// as -c overrides, after codex.toml's, so they win over its keys.
func TestEffortAndInstructionsOnEveryTurn(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	state := writeCodexTOML(t, "model_reasoning_effort = \"low\"\n")
	req := agent.TurnRequest{StateDir: state, Prompt: "review", Model: "gpt-5.1-codex", WorkingDir: "/w",
		ReasoningEffort: "high", Instructions: "Review only: \"change\" nothing.\nSay what is wrong."}
	want := []string{"-c", `model_reasoning_effort="low"`, "-c", `model_reasoning_effort="high"`,
		"-c", `developer_instructions="Review only: \"change\" nothing.\nSay what is wrong."`}
	for _, thread := range []string{"", "0199a213-81c0"} {
		req.ThreadID = thread
		cmd, err := New().Command(req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cmd.Args[:len(want)], want) || cmd.Args[len(want)] != "exec" {
			t.Errorf("thread %q: %q", thread, cmd.Args)
		}
	}
	req.ReasoningEffort = "max"
	_, err := New().Command(req)
	if !errors.Is(err, config.ErrInvalidRequest) || !strings.Contains(err.Error(), `"max"`) || !strings.Contains(err.Error(), "xhigh") {
		t.Errorf("an effort codex does not know: %v", err)
	}
	t.Setenv(BinaryEnv, "/no/such/codex")
	if _, err := New().Command(req); !errors.Is(err, config.ErrInvalidRequest) {
		t.Errorf("a bad effort and no binary: the effort is what the user can fix first: %v", err)
	}
}
