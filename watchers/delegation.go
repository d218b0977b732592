package watchers

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"

	"github.com/zwarm/zwarm/sessions/render"
)

// delegation notices the orchestrator writing code itself through
// exec_command: a heredoc, echo or printf redirected into a source file,
// or sed -i (perl -pi) on one.
type delegation struct {
	cfg   DelegationConfig
	calls cursor
}

func newDelegation(cfg DelegationConfig) *delegation { return &delegation{cfg: cfg} }

func (d *delegation) Name() string { return "delegation" }

var (
	// redirectTarget finds where output is written: > F, >> F, tee [-a] F.
	redirectTarget = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:\d?>>?|\btee(?:\s+-a)?)\s*['"]?([^\s'";|&<>()]+)`)
	})
	writers = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<<-?\s*['"]?\w+|\b(?:echo|printf|cat)\b`) })
	inPlace = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bsed\s+(?:-\w+\s+)*(?:-i|--in-place)|\bperl\s+-\w*p\w*i|\bperl\s+-\w*i\w*p`)
	})
	words = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^\s'";|&<>()]+`) })
)

// writesCode says whether a shell command writes a source file, and which.
func writesCode(cmd string, exts []string) (string, bool) {
	if writers().MatchString(cmd) {
		for _, m := range redirectTarget().FindAllStringSubmatch(cmd, -1) {
			if isSource(m[1], exts) {
				return m[1], true
			}
		}
	}
	if inPlace().MatchString(cmd) {
		for _, w := range words().FindAllString(cmd, -1) {
			if isSource(w, exts) {
				return w, true
			}
		}
	}
	return "", false
}

func (d *delegation) Check(_ context.Context, v *RunView) Verdict {
	for _, c := range v.Calls[d.calls.since(len(v.Calls)):] {
		if c.Name != "exec_command" {
			continue
		}
		var a struct {
			Cmd string `json:"cmd"`
		}
		if json.Unmarshal(c.Args, &a) != nil {
			continue
		}
		if file, ok := writesCode(a.Cmd, d.cfg.Extensions); ok {
			return Verdict{Action: Nudge, Message: fmt.Sprintf("You wrote %s yourself (%s). Delegate implementation to a worker "+
				"(delegate, or converse with one that knows the code) and keep exec_command for verifying.", file, render.Clip(a.Cmd, 160))}
		}
	}
	return Verdict{}
}

// delegating are the calls that hand work to workers or look after them,
// reviewing and landing what they did included.
var delegating = map[string]bool{"delegate": true, "converse": true, "wait": true, "check_session": true,
	"peek_session": true, "get_trajectory": true, "list_sessions": true, "end_session": true,
	"diff_session": true, "land_session": true, "update_session": true}

// reminder notices many steps without delegating; waiting on and checking
// workers count as delegating.
type reminder struct {
	cfg   ReminderConfig
	fired int // the step count when it last reminded
}

func newReminder(cfg ReminderConfig) *reminder { return &reminder{cfg: cfg} }

func (r *reminder) Name() string { return "delegation_reminder" }

func (r *reminder) Check(_ context.Context, v *RunView) Verdict {
	done := v.Step - 1
	last := 0 // the last step that delegated
	for i := len(v.Calls) - 1; i >= 0; i-- {
		if delegating[v.Calls[i].Name] {
			last = v.Calls[i].Step
			break
		}
	}
	streak := done - last
	if streak < r.cfg.Steps || r.fired > last && done-r.fired < r.cfg.Steps {
		return Verdict{}
	}
	r.fired = done
	what := "delegating"
	if last == 0 {
		what = "delegating anything"
	}
	return Verdict{Action: Nudge, Message: fmt.Sprintf("%d steps without %s or checking on workers. You orchestrate: "+
		"hand the implementation to workers (delegate), then wait for them and verify what they did.", streak, what)}
}
