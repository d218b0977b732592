package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// Claude reports each model call's usage as it comes: a worker whose first
// call passes its cost limit is stopped then, in the middle of its turn,
// not once the turn (here a 30-second command) has run its course.
func TestRealClaudeCostLimitStopsTheTurn(t *testing.T) {
	t.Parallel()
	w, srv := realWorld(t, "claude")
	late := filepath.Join(t.TempDir(), "late")
	// 100k input tokens at sonnet's $3 per million: $0.30 in one call.
	srv.On("spend it", fakemodel.Reply{Tool: "Bash", Args: `{"command":"sleep 30; touch ` + late + `"}`, InputTokens: 100_000},
		fakemodel.Reply{Text: "spent"})
	r := w.zwarm("spawn", "--wait", "--json", "--max-cost", "0.05", "spend it")
	var s session
	mustJSON(t, r.stdout, &s)
	if r.code != cli.ExitFailure || s.Status() != record.StatusKilled || !strings.HasPrefix(s.Error, "over its cost limit of $0.05: $0.3") {
		t.Fatalf("exit %d: %s %q\n%s", r.code, s.Status(), s.Error, r.stderr)
	}
	if _, err := os.Stat(late); err == nil {
		t.Fatal("the turn ran its course past the cost limit")
	}
	if len(s.Turns) != 1 || s.Turns[0].Status() != record.StatusKilled {
		t.Fatalf("turns %+v", s.Turns)
	}
	if s.ExitCode == nil || *s.ExitCode != 0 {
		t.Fatalf("claude answers the stop with exit 0, the record says %v", s.ExitCode)
	}
	// show says why it stopped, not "killed (exit 0)".
	human := w.ok("show", s.ID)
	if !regexp.MustCompile(`(?m)^status +killed$`).MatchString(human) || strings.Contains(human, "exit 0") || !strings.Contains(human, "over its cost limit of $0.05") {
		t.Fatalf("show:\n%s", human)
	}
	continuesWithAHigherLimit(t, w, &s)
}

// continuesWithAHigherLimit sends a worker stopped at its cost limit a
// follow-up with a higher one: its thread goes on.
func continuesWithAHigherLimit(t *testing.T, w *world, s *session) {
	t.Helper()
	out := w.ok("inject", "--max-cost", "5", "--wait", s.ID, "go on")
	got := w.show(s.ID)
	if !strings.Contains(out, "turn 2 completed") || got.MaxCostUSD != 5 || got.Status() != record.StatusCompleted ||
		len(got.Turns) != 2 || !got.Turns[1].Resumed || got.ThreadID != s.ThreadID {
		t.Fatalf("after inject --max-cost 5: %q; limit %v, %s, %d turns, thread %q (was %q)", out, got.MaxCostUSD, got.Status(), len(got.Turns), got.ThreadID, s.ThreadID)
	}
}

// Codex prints its usage only at a turn's end, but reports each model
// call's as telemetry about a second after it: a worker with a cost limit
// gets an endpoint for it, and one whose first call passes the limit is
// stopped then, in the middle of its turn.
func TestRealCodexCostLimitStopsTheTurn(t *testing.T) {
	t.Parallel()
	w, srv := realWorld(t, "codex")
	late := filepath.Join(t.TempDir(), "late")
	// 100k input tokens at the test's gpt-5.5 price, $1 per million:
	// $0.10. (codex stops a command after 10 s of its own: this one
	// ends sooner, so only a stop keeps it from making the file.)
	srv.On("spend it", fakemodel.Reply{Tool: "exec_command", Args: `{"cmd":"sleep 6; touch ` + late + `"}`, InputTokens: 100_000},
		fakemodel.Reply{Text: "spent"})
	r := w.zwarm("spawn", "--wait", "--json", "--max-cost", "0.05", "spend it")
	var s session
	mustJSON(t, r.stdout, &s)
	if r.code != cli.ExitFailure || s.Status() != record.StatusKilled || !strings.HasPrefix(s.Error, "over its cost limit of $0.05: $0.1") {
		t.Fatalf("exit %d: %s %q\n%s", r.code, s.Status(), s.Error, r.stderr)
	}
	if _, err := os.Stat(late); err == nil {
		t.Fatal("the turn ran its course past the cost limit")
	}
	if len(s.Turns) != 1 || s.Usage.InputTokens < 100_000 {
		t.Fatalf("turns %+v, usage %+v", s.Turns, s.Usage)
	}
	continuesWithAHigherLimit(t, w, &s)
}
