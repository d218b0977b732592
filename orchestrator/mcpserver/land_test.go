package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// diff, land and update over MCP, in a real git repository: the same
// tools and rules as the orchestrator's, in the words of the served
// names. The repository sets the environment, so this test is not
// parallel.
func TestMCPDiffAndLandInAGitRepo(t *testing.T) {
	t.Parallel()
	c := connect(t, nil, 300*time.Millisecond)
	c.w.Repo(map[string]string{"conf.txt": "port = 80\n"})
	gate := filepath.Join(t.TempDir(), "gate")
	c.w.Script(map[string][]fakeagent.Step{
		"add alpha": append([]fakeagent.Step{fakeagent.Run(`printf 'alpha\n' > alpha.txt`)}, fakeagent.Completes("alpha added", 100)...),
		"use 8080":  append([]fakeagent.Step{fakeagent.WaitFile(gate), fakeagent.Run(`printf 'port = 8080\n' > conf.txt`)}, fakeagent.Completes("8080", 100)...),
		"use 9090":  append([]fakeagent.Step{fakeagent.Run(`printf 'port = 9090\n' > conf.txt`)}, fakeagent.Completes("9090", 100)...),
		"here":      append([]fakeagent.Step{fakeagent.Run(`printf 'here\n' > here.txt`)}, fakeagent.Completes("here", 100)...),
	})
	refused := func(tool string, args any, wants ...string) {
		t.Helper()
		res := c.call(tool, args, nil)
		got := text(res)
		if !res.IsError {
			t.Fatalf("%s(%v) is not an error: %s", tool, args, got)
		}
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s(%v): %q lacks %q", tool, args, got, w)
			}
		}
		if m := renamed().FindString(got); m != "" || strings.Contains(got, "run's dir") {
			t.Errorf("%s(%v): %q speaks of the orchestrator (%q)", tool, args, got, m)
		}
	}
	alpha, slow, other := c.spawn("add alpha"), c.spawn("use 8080"), c.spawn("use 9090")
	var wr waitResult
	c.ok("wait", map[string]any{"session_ids": []string{alpha, other}, "mode": "all"}, &wr)
	if len(wr.Finished) != 2 {
		t.Fatalf("wait: %+v", wr)
	}

	diff := c.ok("diff", map[string]any{"session_id": alpha}, nil)
	for _, want := range []string{"worker " + alpha + " · completed · branch zwarm/" + alpha + " from main", "not landed", "+++ b/alpha.txt", "+alpha"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	refused("land", map[string]any{"session_id": slow}, "refused: worker "+record.ShortID(slow)+" is still running",
		"wait for it (wait) or stop it (kill), then call land again")

	var l struct {
		Landed   bool   `json:"landed"`
		Verified bool   `json:"verified"`
		Into     string `json:"into"`
		Note     string `json:"note"`
	}
	c.ok("land", map[string]any{"session_id": alpha}, &l)
	if !l.Landed || l.Into != "main" || l.Verified || !strings.Contains(l.Note, "verify it in "+c.w.Work) {
		t.Fatalf("land: %+v", l)
	}
	if got, err := os.ReadFile(filepath.Join(c.w.Work, "alpha.txt")); err != nil || string(got) != "alpha\n" {
		t.Fatalf("alpha.txt in the server's checkout: %q %v", got, err)
	}
	// An MCP client verifies before it lands, as land --verify does; a
	// client that asked for progress hears that a long one still works.
	res, err := c.cs.CallTool(context.Background(), withToken(&mcp.CallToolParams{Name: "land",
		Arguments: map[string]any{"session_id": other, "verify": "sleep 1.5; test -f alpha.txt", "verify_timeout_seconds": 600}}, "land-1"))
	if err != nil || res.IsError || json.Unmarshal([]byte(text(res)), &l) != nil || !l.Landed || !l.Verified || !strings.Contains(l.Note, "verified before it landed") {
		t.Fatalf("land with verify: %+v %v %v", l, err, res)
	}
	c.mu.Lock()
	beats := 0
	for _, p := range c.progress {
		if p.ProgressToken == "land-1" && strings.HasPrefix(p.Message, "land: still working after") {
			beats++
		}
	}
	c.mu.Unlock()
	if beats == 0 {
		t.Errorf("a landing that verified for 1.5 s sent no progress, its heartbeat every 0.3 s")
	}

	// The slow worker started from the first commit too: its change now
	// conflicts with what landed.
	os.WriteFile(gate, nil, 0o600)
	c.ok("wait", map[string]any{"session_ids": []string{slow}}, &wr)
	before := c.w.Git("rev-parse", "HEAD")
	refused("land", map[string]any{"session_id": slow}, "conflicts with main in conf.txt; nothing was changed",
		"update merges main into the worker's branch", "review diff, then call land again")
	if c.w.Git("rev-parse", "HEAD") != before {
		t.Error("a refused landing moved main")
	}
	var u struct {
		Conflict []string `json:"conflict"`
		Note     string   `json:"note"`
	}
	c.ok("update", map[string]any{"session_id": slow}, &u)
	if len(u.Conflict) != 1 || u.Conflict[0] != "conf.txt" || !strings.Contains(u.Note, "asked to resolve them") {
		t.Errorf("update: %+v", u)
	}
	c.ok("wait", map[string]any{"session_ids": []string{slow}}, &wr)

	// spawn takes isolation: in place, there is nothing to diff.
	var sp struct {
		SessionID  string `json:"session_id"`
		Isolation  string `json:"isolation"`
		WorkingDir string `json:"working_dir"`
	}
	c.ok("spawn", map[string]any{"task": "here", "isolation": "none"}, &sp)
	if sp.Isolation != "none" || sp.WorkingDir != c.w.Work {
		t.Fatalf("spawn in place: %+v", sp)
	}
	c.ok("wait", map[string]any{"session_ids": []string{sp.SessionID}}, &wr)
	refused("diff", map[string]any{"session_id": sp.SessionID}, "works in place, in "+c.w.Work)
	refused("land", map[string]any{"session_id": sp.SessionID}, "worked in place", "nothing to land")
}
