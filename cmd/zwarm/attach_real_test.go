package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// A person attaches to a finished worker (the real CLI, in a worktree of
// its own): its own interactive CLI opens on their terminal in the
// worker's thread, what they ask goes to the same conversation, what they
// make is committed when they leave, the session settles again with the
// span recorded, and a follow-up continues the thread with all of it.
func TestRealAgentAttach(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		needTmux(t)
		w, srv := realRepoWorld(t, a.name)
		srv.On("first question", fakemodel.Reply{Text: "first answer"})
		// The person's question gets the tool call until a request carries
		// the call's result, whichever request comes first: codex's TUI asks
		// the model more than once a turn (a title, in a conversation of its
		// own, with the same question), and a reply scripted once could go to
		// that request instead of the thread's. Everything else gets the
		// answer.
		hand := fakemodel.Reply{Tool: a.tool, Args: a.args("echo by hand > person.txt")}
		srv.Fallback(fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
			if b := string(body); strings.Contains(b, "make it by hand") && !strings.Contains(b, "echo by hand") {
				return hand
			}
			return fakemodel.Reply{Text: "made person.txt"}
		}})
		srv.On("after the person", fakemodel.Reply{Text: "carried on"})
		var s session
		mustJSON(t, w.ok("spawn", "--wait", "--json", "first question"), &s)
		if s.Status() != record.StatusCompleted || s.Worktree == "" {
			t.Fatalf("spawn: %s (%s), worktree %q", s.Status(), s.Error, s.Worktree)
		}
		if a.name == "claude" {
			claudeTrusts(t, w, s.WorkingDir)
		}
		tm := startTmux(t, w, nil, 160, 48, bins.zwarm, "attach", s.ID)
		// Codex asks first whether to trust the repository, and offers a
		// newer model: trust it, keep the session's model.
		deadline := time.Now().Add(60 * time.Second)
		for screen := tm.screen(); !strings.Contains(screen, "first answer"); screen = tm.screen() {
			switch {
			case strings.Contains(screen, "Trust and continue"):
				tm.typeText("", "Enter")
			case strings.Contains(screen, "Use existing model"):
				tm.typeText("2")
			}
			if time.Now().After(deadline) {
				t.Fatalf("the CLI never showed the worker's thread:\n%s", screen)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if got := w.show(s.ID); got.Status() != record.StatusAttached {
			t.Fatalf("while the CLI runs: %s", got.Status())
		}
		if r := w.zwarm("kill", s.ID); r.code == 0 || !strings.Contains(r.stderr, "a person is attached to it") {
			t.Fatalf("kill while attached: %+v", r)
		}
		tm.typeText("make it by hand", "Enter")
		tm.waitFor("the person's question", "made person.txt", 60*time.Second)
		quit := map[string]string{"codex": "/quit", "claude": "/exit"}[a.name]
		tm.typeText(quit, "Enter")
		screen := tm.waitFor("the CLI to exit", "zwarm-exit=", 60*time.Second)
		if !strings.Contains(screen, "zwarm-exit=0") || !strings.Contains(screen, "it is completed again") {
			t.Fatalf("leaving the CLI:\n%s", screen)
		}
		got := w.show(s.ID)
		if got.Status() != record.StatusCompleted || len(got.Attached) != 1 || len(got.Turns) != 1 {
			t.Fatalf("after: %s, spans %+v, %d turns", got.Status(), got.Attached, len(got.Turns))
		}
		// The file first: without it, a missing commit says nothing new.
		if b, err := os.ReadFile(filepath.Join(got.Worktree, "person.txt")); err != nil || string(b) != "by hand\n" {
			t.Fatalf("the CLI did not write person.txt in the worktree (read %q, %v); its screen:\n%s", b, err, screen)
		}
		span := got.Attached[0]
		if span.End == nil || span.ExitCode == nil || *span.ExitCode != 0 || span.Commit == "" || strings.Join(span.Files, ",") != "person.txt" {
			t.Fatalf("the attach span: want ended, exit code 0, a commit of person.txt; got ended %v, exit code %s, commit %q, files %q",
				span.End != nil, exitText(span.ExitCode), span.Commit, span.Files)
		}
		// What the person's calls used is counted, in the span: read from
		// the agent's own session log.
		if span.Usage == nil || span.Usage.TotalTokens == 0 || span.CostUSD == nil {
			t.Fatalf("the attach span's usage: %+v, cost %v", span.Usage, span.CostUSD)
		}
		if got.Usage.TotalTokens != s.Usage.TotalTokens+span.Usage.TotalTokens {
			t.Fatalf("the session's tokens %d: want turn 1's %d and the span's %d", got.Usage.TotalTokens, s.Usage.TotalTokens, span.Usage.TotalTokens)
		}
		if shown := w.ok("show", s.ID); !strings.Contains(shown, "attached ") || !strings.Contains(shown, "(1 file)") {
			t.Fatalf("show says nothing of the attach:\n%s", shown)
		}
		// The person's question went to the worker's conversation (codex
		// also asks for a title for it, in a conversation of its own).
		inThread := false
		var asked []string // the requests with the question, for the failure
		for _, r := range srv.Requests() {
			body := string(r.Body)
			inThread = inThread || strings.Contains(body, "make it by hand") && strings.Contains(body, "first answer")
			if strings.Contains(body, "make it by hand") {
				asked = append(asked, fmt.Sprintf("%s (%d bytes): %.1500s", r.Path, len(body), body))
			}
		}
		if !inThread {
			t.Fatalf("no request carried the person's question with the worker's history; %d carried the question:\n%s",
				len(asked), strings.Join(asked, "\n\n"))
		}
		out := w.ok("inject", "--wait", s.ID, "after the person")
		if !strings.Contains(out, "turn 2 completed") || !strings.Contains(out, "carried on") {
			t.Fatalf("inject after the attach: %q", out)
		}
		reqs := srv.Requests()
		last := string(reqs[len(reqs)-1].Body)
		for _, want := range []string{"first question", "make it by hand", "made person.txt", "after the person"} {
			if !strings.Contains(last, want) {
				t.Fatalf("the follow-up's request lacks %q: the thread did not go on (%d bytes)", want, len(last))
			}
		}
		after := w.show(s.ID)
		if after.ThreadID != s.ThreadID || !after.Turns[1].Resumed {
			t.Fatalf("thread %q then %q", s.ThreadID, after.ThreadID)
		}
		// The follow-up is charged its own call only (the fake model
		// counts 100 in and 10 out a call), not the person's before it.
		t.Logf("turn 1 %d tokens, the span %d, turn 2 %d, the session %d", after.Turns[0].Usage.TotalTokens, span.Usage.TotalTokens,
			after.Turns[1].Usage.TotalTokens, after.Usage.TotalTokens)
		if t2 := after.Turns[1].Usage.TotalTokens; t2 != 110 || after.Usage.TotalTokens != after.Turns[0].Usage.TotalTokens+span.Usage.TotalTokens+t2 {
			t.Fatalf("turn 2 was charged %d tokens for its one call; the session %d", t2, after.Usage.TotalTokens)
		}
	})
}

// claudeTrusts answers, in its config, what Claude Code asks a person the
// first time it runs interactively (onboarding, the API key, trusting the
// worker's dir, the bypass-permissions warning): the test's home is new.
func claudeTrusts(t *testing.T, w *world, dir string) {
	t.Helper()
	home := ""
	for _, e := range w.extraEnv {
		if v, ok := strings.CutPrefix(e, "CLAUDE_CONFIG_DIR="); ok {
			home = v
		}
	}
	path := filepath.Join(home, ".claude.json")
	cfg := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
	}
	cfg["hasCompletedOnboarding"] = true
	cfg["bypassPermissionsModeAccepted"] = true
	cfg["customApiKeyResponses"] = map[string]any{"approved": []string{"sk-ant-test"}, "rejected": []string{}}
	projects, _ := cfg["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	projects[dir] = map[string]any{"hasTrustDialogAccepted": true}
	cfg["projects"] = projects
	b, _ := json.Marshal(cfg)
	writeFile(t, path, string(b))
	writeFile(t, filepath.Join(home, "settings.json"), `{"skipDangerousModePermissionPrompt": true}`)
}

// exitText is an exit code for a failure message: the number, or "none".
func exitText(code *int) string {
	if code == nil {
		return "none"
	}
	return strconv.Itoa(*code)
}
