package watchers

import (
	"strings"
	"testing"
)

func scopeCfg(words ...string) ScopeConfig {
	c := DefaultConfig().Scope
	c.Keywords = words
	return c
}

func TestScopeKeywordNudgesWithTheTask(t *testing.T) {
	w := newScope(scopeCfg("kubernetes", "rewrite in rust"))
	h := newHistory("add a --verbose flag to the CLI")
	ask(t, w, h, Continue)
	h.step("I will add the flag.", call("delegate", map[string]any{"task": "flag"}))
	ask(t, w, h, Continue)
	h.step("Maybe we should deploy this on Kubernetes-based infra first.")
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, `"Kubernetes"`) || !strings.Contains(v.Message, "Keep to the task: add a --verbose flag to the CLI") {
		t.Errorf("message %q", v.Message)
	}
	ask(t, w, h, Continue) // that message was read
	h.v.Messages = append(h.v.Messages, Message{Step: h.done + 1, Kind: "reasoning", Text: "or REWRITE IN RUST"})
	h.step("")
	ask(t, w, h, Nudge)
}

func TestScopeQuiet(t *testing.T) {
	w := newScope(scopeCfg("kubernetes", "db"))
	h := newHistory("add a --verbose flag to the CLI")
	ask(t, w, h, Continue)
	// Whole words only: "dbg" and "sandbox" are not "db".
	h.step("I will print dbg output in the sandbox.", call("delegate", map[string]any{"task": "flag"}))
	ask(t, w, h, Continue)
}
