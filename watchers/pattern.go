package watchers

import (
	"context"
	"fmt"

	"github.com/zwarm/zwarm/sessions/render"
)

// pattern applies configured rules: a regex over the model's messages and
// the tool outputs since the last step, with the action and message of
// the rule.
type pattern struct {
	cfg        PatternConfig
	msgs, outs cursor
}

func newPattern(cfg PatternConfig) *pattern { return &pattern{cfg: cfg} }

func (p *pattern) Name() string { return "pattern" }

func (p *pattern) Check(_ context.Context, v *RunView) Verdict {
	msgs := v.Messages[p.msgs.since(len(v.Messages)):]
	outs := v.Calls[p.outs.since(len(v.Calls)):]
	var out Verdict
	for _, r := range p.cfg.Rules {
		if r.Action.Severity() <= out.Action.Severity() {
			continue
		}
		hit := ""
		if r.In != "outputs" {
			for _, m := range msgs {
				if hit = r.Regex.FindString(m.Text); hit != "" {
					break
				}
			}
		}
		if hit == "" && r.In != "messages" {
			for _, c := range outs {
				if hit = r.Regex.FindString(c.Output); hit != "" {
					break
				}
			}
		}
		if hit == "" {
			continue
		}
		msg := r.Message
		if msg == "" {
			msg = fmt.Sprintf("pattern %s matched %q", r.Regex, render.Clip(hit, 120))
		}
		out = Verdict{Action: r.Action, Message: msg}
	}
	return out
}
