package orchestrator

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// withWorkers builds a reply from the ids of every worker delegate
// returned in the conversation so far.
func withWorkers(build func(ids []string) fakemodel.Reply) fakemodel.Reply {
	return fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
		var ids []string
		for _, out := range fakemodel.Outputs(body, "delegate") {
			var d struct {
				SessionID string `json:"session_id"`
			}
			json.Unmarshal([]byte(out), &d)
			ids = append(ids, d.SessionID)
		}
		return build(ids)
	}}
}

// A run in a git repository: two workers, each in its own worktree, are
// reviewed with diff_session, landed with land_session into the run's
// checkout and verified there with exec_command; the summary says what was
// landed. The repository is real, and so is git.
func TestRunLandsItsWorkersChangesIntoTheCheckout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LAND RUN: add alpha and beta")
	h.w.Repo(map[string]string{"README": "hi\n"})
	h.w.Script(map[string][]fakeagent.Step{
		"add alpha": append([]fakeagent.Step{fakeagent.Run(`printf 'alpha\n' > alpha.txt`)}, fakeagent.Completes("alpha.txt added", 500)...),
		"add beta":  append([]fakeagent.Step{fakeagent.Run(`printf 'beta\n' > beta.txt`)}, fakeagent.Completes("beta.txt added", 500)...),
	})
	each := func(tool string, extra map[string]any) fakemodel.Reply {
		return withWorkers(func(ids []string) fakemodel.Reply {
			var cs []fakemodel.Call
			for _, id := range ids {
				args := map[string]any{"session_id": id}
				for k, v := range extra {
					args[k] = v
				}
				cs = append(cs, call(tool, args))
			}
			return calls(cs...)
		})
	}
	h.script(
		calls(call("delegate", map[string]any{"task": "add alpha"}), call("delegate", map[string]any{"task": "add beta"})),
		calls(call("wait", map[string]any{"mode": "all"})),
		each("diff_session", nil),
		each("land_session", nil),
		calls(call("exec_command", map[string]any{"cmd": "cat alpha.txt beta.txt && test -f alpha.txt && test -f beta.txt && git status --porcelain", "login": false, "yield_time_ms": 60000})),
		calls(call("finish", map[string]any{"summary": "alpha and beta are in; verified in the checkout"})),
	)
	rec := h.execute(h.settings(nil), 0)
	if rec.Status != runs.StatusCompleted || rec.Steps != 6 || len(rec.Workers) != 2 {
		t.Fatalf("record %+v", rec)
	}
	a, b := rec.Workers[0], rec.Workers[1]
	for _, id := range rec.Workers {
		s := workerOf(t, h.w, id)
		ws := s.Workspace
		if ws == nil || ws.Branch != "zwarm/"+id || strings.HasPrefix(ws.Path, h.w.Work) || ws.Landed == nil || ws.Landed.Into != "main" {
			t.Fatalf("worker %s: workspace %+v", id, ws)
		}
		if !strings.HasPrefix(s.WorkingDir, ws.Path) {
			t.Errorf("worker %s ran in %s, not in its worktree %s", id, s.WorkingDir, ws.Path)
		}
	}

	// The main checkout has both changes, committed, and nothing else.
	for name, want := range map[string]string{"alpha.txt": "alpha\n", "beta.txt": "beta\n"} {
		if got, err := os.ReadFile(filepath.Join(h.w.Work, name)); err != nil || string(got) != want {
			t.Errorf("%s in the checkout: %q %v", name, got, err)
		}
	}
	if st := h.w.Git("status", "--porcelain"); st != "" {
		t.Errorf("the checkout is not clean: %q", st)
	}
	if log := h.w.Git("log", "--format=%s", "main"); log != "add beta\nadd alpha\ninit" {
		t.Errorf("main's history:\n%s", log)
	}

	_, items, _ := h.onDisk(rec.ID)
	diffs := outputsOf(items, "diff_session")
	if len(diffs) != 2 {
		t.Fatalf("%d diff_session outputs", len(diffs))
	}
	mustContain(t, "the first diff", diffs[0], "worker "+a+" · completed · branch zwarm/"+a, "· not landed", "+++ b/alpha.txt", "+alpha")
	mustContain(t, "the second diff", diffs[1], "+++ b/beta.txt", "+beta")
	lands := strings.Join(outputsOf(items, "land_session"), "\n")
	mustContain(t, "land_session's outputs", lands, `"landed":true`, `"into":"main"`, `"path":"alpha.txt"`, `"path":"beta.txt"`)
	mustContain(t, "exec_command's output", strings.Join(outputsOf(items, "exec_command"), ""), "Process exited with code 0", "alpha", "beta")

	// The summary says what was landed, after the model's own words.
	mustContain(t, "the summary", rec.Summary, "alpha and beta are in; verified in the checkout\n\nLanded:",
		fmt.Sprintf("- %s into main as ", record.ShortID(a)), "(+1 -0 in 1 file): add alpha",
		fmt.Sprintf("- %s into main as ", record.ShortID(b)), "(+1 -0 in 1 file): add beta")
	if strings.Contains(rec.Summary, "Not landed") {
		t.Errorf("the summary says something was not landed:\n%s", rec.Summary)
	}
	if len(rec.Changes) != 2 || rec.Changes[0].Session != a || rec.Changes[0].Outcome != runs.ChangeLanded || rec.Changes[1].Outcome != runs.ChangeLanded ||
		rec.Changes[1].Into != "main" || rec.Changes[1].Commit != h.w.Git("rev-parse", "main") {
		t.Errorf("changes %+v", rec.Changes)
	}

	// The prompt told the model to review, land and verify; the third
	// step's observation named each worker's unlanded files.
	reqs := h.requests()
	mustContain(t, "the system prompt", fakemodel.Input(reqs[0].Body)[0].Text, "review its change with diff_session", "Land what is good with land_session",
		"After landing, verify in the run's directory with exec_command")
	in := fakemodel.Input(reqs[2].Body)
	mustContain(t, "the third observation", in[len(in)-1].Text, "Worktrees (diff_session reviews a change, land_session brings it into the run's dir): ",
		record.ShortID(a)+" +1 -0 in 1 file: alpha.txt, not landed", record.ShortID(b)+" +1 -0 in 1 file: beta.txt, not landed")
	in = fakemodel.Input(reqs[4].Body)
	mustContain(t, "the observation after landing", in[len(in)-1].Text, record.ShortID(a)+" landed into main")
}

// A run ended with a change left unlanded says so, and where it is.
func TestRunSummaryListsWhatWasLeftUnlanded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "UNLANDED RUN: add gamma")
	h.w.Repo(map[string]string{"README": "hi\n"})
	h.w.Script(map[string][]fakeagent.Step{
		"add gamma": append([]fakeagent.Step{fakeagent.Run(`printf 'gamma\n' > gamma.txt`)}, fakeagent.Completes("gamma added", 500)...),
	})
	h.script(
		calls(call("delegate", map[string]any{"task": "add gamma"})),
		calls(call("wait", map[string]any{"mode": "all"})),
		calls(call("finish", map[string]any{"summary": "gamma is on its branch, not reviewed"})),
	)
	rec := h.execute(h.settings(nil), 0)
	id := rec.Workers[0]
	mustContain(t, "the summary", rec.Summary, "gamma is on its branch, not reviewed\n\nLanded: none.\nNot landed (the change is still on the worker's branch):",
		fmt.Sprintf("- %s +1 -0 in 1 file on branch zwarm/%s: add gamma", record.ShortID(id), id))
	if len(rec.Changes) != 1 || rec.Changes[0].Outcome != runs.ChangeUnlanded || rec.Changes[0].Branch != "zwarm/"+id {
		t.Errorf("changes %+v", rec.Changes)
	}
	if _, err := os.Stat(filepath.Join(h.w.Work, "gamma.txt")); !os.IsNotExist(err) {
		t.Error("an unlanded change reached the checkout")
	}
}

// Outside a git repository nothing changes: workers work in place, the
// prompt says so, and the summary is the model's alone.
func TestRunOutsideARepoWorksInPlace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "IN PLACE RUN")
	h.script(
		calls(call("delegate", map[string]any{"task": "do it"})),
		calls(call("wait", map[string]any{"mode": "all"})),
		calls(call("finish", map[string]any{"summary": "done"})),
	)
	rec := h.execute(h.settings(nil), 0)
	if rec.Summary != "done" || rec.Changes != nil {
		t.Errorf("summary %q, changes %+v", rec.Summary, rec.Changes)
	}
	if s := workerOf(t, h.w, rec.Workers[0]); s.Workspace != nil || s.WorkingDir != h.w.Work {
		t.Errorf("the worker works in %s with %+v", s.WorkingDir, s.Workspace)
	}
	prompt := fakemodel.Input(h.requests()[0].Body)[0].Text
	mustContain(t, "the system prompt", prompt, "Workers work in place")
	if strings.Contains(prompt, "land_session") {
		t.Error("the prompt speaks of landing where there is nothing to land")
	}
}

// isolation = "none" in [orchestrator] keeps a run in a repository in
// place.
func TestRunIsolationNoneWorksInPlaceInARepo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "NONE RUN")
	h.w.Repo(map[string]string{"README": "hi\n"})
	h.w.Script(map[string][]fakeagent.Step{"touch it": append([]fakeagent.Step{fakeagent.Run(`printf 'x\n' > x.txt`)}, fakeagent.Completes("done", 10)...)})
	h.script(
		calls(call("delegate", map[string]any{"task": "touch it"})),
		calls(call("wait", map[string]any{"mode": "all"})),
		calls(call("finish", map[string]any{"summary": "done"})),
	)
	rec := h.execute(h.settings(func(s *Settings) { s.Isolation = config.IsolationNone }), 0)
	if s := workerOf(t, h.w, rec.Workers[0]); s.Workspace != nil {
		t.Errorf("the worker has a worktree: %+v", s.Workspace)
	}
	if _, err := os.Stat(filepath.Join(h.w.Work, "x.txt")); err != nil {
		t.Errorf("the worker did not work in place: %v", err)
	}
	if rec.Isolation != config.IsolationNone || rec.Summary != "done" {
		t.Errorf("record isolation %q summary %q", rec.Isolation, rec.Summary)
	}
	mustContain(t, "the system prompt", fakemodel.Input(h.requests()[0].Body)[0].Text, "Workers work in place")
}
