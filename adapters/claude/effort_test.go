package claude

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
)

// A session's effort and instructions reach claude on every turn: --effort
// and --append-system-prompt, the text in the same argument, so a dash at
// its start is not taken for an option.
func TestEffortAndInstructionsOnEveryTurn(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	req := agent.TurnRequest{StateDir: stateWith(t, ""), Prompt: "review", Model: "sonnet", WorkingDir: "/w",
		ReasoningEffort: "max", Instructions: "- review only\n- change nothing"}
	for _, thread := range []string{"", "c85d04b6"} {
		req.ThreadID = thread
		cmd, err := New().Command(req)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(cmd.Args, "--effort")
		if i < 0 || !reflect.DeepEqual(cmd.Args[i:i+3], []string{"--effort", "max", "--append-system-prompt=- review only\n- change nothing"}) {
			t.Errorf("thread %q: %q", thread, cmd.Args)
		}
	}
	req.ReasoningEffort = "minimal"
	_, err := New().Command(req)
	if !errors.Is(err, config.ErrInvalidRequest) || !strings.Contains(err.Error(), `"minimal"`) || !strings.Contains(err.Error(), "max") {
		t.Errorf("an effort claude does not know: %v", err)
	}
	t.Setenv(BinaryEnv, "/no/such/claude")
	if _, err := New().Command(req); !errors.Is(err, config.ErrInvalidRequest) {
		t.Errorf("a bad effort and no binary: the effort is what the user can fix first: %v", err)
	}
	if !New().ReportsCost() {
		t.Error("claude reports its cost: a cost limit needs no price table")
	}
}
