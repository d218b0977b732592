package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// A role's reasoning effort and instructions reach the model through the
// real CLIs, on the first turn and on a resumed one. The effort is low:
// high is one agent's default, which would prove nothing.
func TestRealAgentGetsTheRolesEffortAndInstructions(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realWorld(t, a.name)
		cfg, _ := os.ReadFile(filepath.Join(w.State, "config.toml"))
		writeFile(t, filepath.Join(w.State, "config.toml"), string(cfg)+`
[roles.pirate]
reasoning_effort = "low"
instructions = "Always answer like a pirate, matey."
`)
		srv.On("review the change", fakemodel.Reply{Text: "arr, it be fine"})
		srv.On("and the tests", fakemodel.Reply{Text: "arr, they pass"})
		var s session
		mustJSON(t, w.ok("spawn", "--wait", "--json", "--role", "pirate", "review the change"), &s)
		if s.Status() != record.StatusCompleted || s.ReasoningEffort != "low" {
			t.Fatalf("%s %q: %+v", s.Status(), s.Error, s.Session)
		}
		w.ok("inject", "--wait", s.ID, "and the tests")
		effort := map[string]string{"codex": `"reasoning":{"effort":"low"`, "claude": `"output_config":{"effort":"low"}`}[a.name]
		turns := map[string]int{}
		for _, r := range srv.Requests() {
			b := string(r.Body)
			turn := "first"
			switch {
			case strings.Contains(b, "and the tests"):
				turn = "follow-up"
			case !strings.Contains(b, "review the change"):
				continue
			}
			turns[turn]++
			if !strings.Contains(b, "Always answer like a pirate, matey.") || !strings.Contains(b, effort) {
				t.Errorf("a request of the %s turn lacks the instructions or %s: %.2000s", turn, effort, b)
			}
		}
		if turns["first"] == 0 || turns["follow-up"] == 0 {
			t.Fatalf("requests by turn: %v", turns)
		}
	})
}
