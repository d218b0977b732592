package watchers

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/zwarm/zwarm/sessions/render"
)

// scope notices the model talking about what the task should avoid: a
// configured keyword in its messages or reasoning since the last step.
type scope struct {
	cfg   ScopeConfig
	words []*regexp.Regexp
	msgs  cursor
}

func newScope(cfg ScopeConfig) *scope {
	s := &scope{cfg: cfg}
	for _, k := range cfg.Keywords {
		if k = strings.TrimSpace(k); k != "" {
			s.words = append(s.words, wordRegexp(k))
		}
	}
	return s
}

// wordRegexp matches k ignoring case, as a whole word where it starts or
// ends with a word character.
func wordRegexp(k string) *regexp.Regexp {
	pat := regexp.QuoteMeta(k)
	if isWord(k[0]) {
		pat = `\b` + pat
	}
	if isWord(k[len(k)-1]) {
		pat += `\b`
	}
	return regexp.MustCompile("(?i)" + pat)
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (s *scope) Name() string { return "scope" }

func (s *scope) Check(_ context.Context, v *RunView) Verdict {
	for i := s.msgs.since(len(v.Messages)); i < len(v.Messages); i++ {
		for _, w := range s.words {
			if hit := w.FindString(v.Messages[i].Text); hit != "" {
				return Verdict{Action: Nudge, Message: fmt.Sprintf("You mentioned %q, which this task is to stay away from. "+
					"Keep to the task: %s", hit, render.Clip(v.Task, 400))}
			}
		}
	}
	return Verdict{}
}
