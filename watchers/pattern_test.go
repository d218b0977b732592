package watchers

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func patternCfg(t *testing.T, rules string) PatternConfig {
	t.Helper()
	c := DefaultConfig().Pattern
	if _, err := toml.Decode(rules, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

const patternRules = `
[[rules]]
regex = '(?i)git push --force'
action = "abort"
message = "force pushes are not allowed"
in = "outputs"
[[rules]]
regex = '(?i)\bTODO\b'
action = "nudge"
in = "messages"
[[rules]]
regex = 'password'
action = "pause"
message = "a password showed up"
`

func TestPatternRulesFireWithTheirAction(t *testing.T) {
	w := newPattern(patternCfg(t, patternRules))
	h := newHistory("ship it")
	ask(t, w, h, Continue)
	h.step("Leaving a todo for later.")
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, `matched "todo"`) {
		t.Errorf("message %q", v.Message)
	}
	h.step("", callOut("exec_command", map[string]any{"cmd": "cat .env"}, "password=hunter2"))
	if v := ask(t, w, h, Pause); v.Message != "a password showed up" {
		t.Errorf("message %q", v.Message)
	}
	// The most severe rule wins.
	h.step("todo", callOut("exec_command", map[string]any{"cmd": "git log"}, "Git Push --force origin main"))
	if v := ask(t, w, h, Abort); v.Message != "force pushes are not allowed" {
		t.Errorf("message %q", v.Message)
	}
}

func TestPatternQuiet(t *testing.T) {
	w := newPattern(patternCfg(t, patternRules))
	h := newHistory("ship it")
	ask(t, w, h, Continue)
	// A rule looks only where it is told to.
	h.step("I will not git push --force.", callOut("exec_command", map[string]any{"cmd": "grep -r TODO"}, "TODO: later"))
	ask(t, w, h, Continue)
	h.step("all fine")
	ask(t, w, h, Continue) // already read
}
