package watchers

import "testing"

// A resumed run's first check meets a history that was judged before the
// run stopped: what stopped it must not stop it again at once. What comes
// after is judged as ever.
func TestResumedRunHistoryIsNotJudgedAgain(t *testing.T) {
	progress := progressCfg()
	llmc := llmCfg()
	llmc.Every = 1
	rules := patternCfg(t, patternRules)
	cases := []struct {
		w       RunWatcher
		trigger func(h *history)
		want    Action
	}{
		{newPattern(rules), func(h *history) { h.step("", callOut("exec_command", map[string]any{"cmd": "x"}, "git push --force")) }, Abort},
		{newScope(scopeCfg("kubernetes")), func(h *history) { h.step("on kubernetes") }, Nudge},
		{newDelegation(DefaultConfig().Delegation), func(h *history) { h.step("", call("exec_command", map[string]any{"cmd": "echo x > a.go"})) }, Nudge},
		{newProgress(progress), func(h *history) {
			for i := 0; i < 5; i++ {
				h.step("", call("list_sessions", map[string]any{}))
			}
		}, Abort},
		{newLLM(llmc, &reviewer{answers: []string{`{"verdict":"problem","reason":"x"}`, `{"verdict":"problem","reason":"y"}`}}, nil),
			func(h *history) { h.step("", call("wait", map[string]any{})) }, Nudge},
	}
	for _, c := range cases {
		h := newHistory("ship it")
		c.trigger(h)
		ask(t, c.w, h, Continue)
		c.trigger(h)
		ask(t, c.w, h, c.want)
	}
}
