package tools

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Bounds of ask_user's arguments: a question fits on a screen.
const (
	MaxQuestionBytes = 2000
	MaxAskOptions    = 10
	MaxOptionBytes   = 200
)

// Asker puts a question to the person and waits for the answer, or for
// ctx to end; what it returns is the call's output.
type Asker func(ctx context.Context, question string, options []string) Result

// AskUser returns the ask_user tool. The orchestrator offers it when a
// person can answer; zwarm mcp does not serve it (its client is already
// talking with one).
func AskUser(ask Asker) Tool {
	schema := object(map[string]prop{
		"question": str("The question, complete on its own: the person reads it without this conversation. Say what you need decided and why it matters."),
		"options":  strArray("Up to 10 short answers to choose from, when the choice is between a few; the person may still answer in their own words."),
	}, "question")
	return Tool{
		Name: "ask_user",
		Description: "Ask the person who runs this task a question and wait for the answer. Only for what you cannot find out " +
			"or decide well yourself: a choice that is theirs to make, information only they have. Workers go on while the run waits. " +
			"The answer may be \"no answer: decide yourself\": then decide, and say what you decided in your summary.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				Question string   `json:"question"`
				Options  []string `json:"options"`
			}
			if err := decode("ask_user", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			q := strings.TrimSpace(a.Question)
			switch {
			case q == "":
				return Errorf("question is empty: say what you need the person to decide")
			case len(q) > MaxQuestionBytes || !utf8.ValidString(q):
				return Errorf("question must be UTF-8 text of at most %d bytes; ask something shorter", MaxQuestionBytes)
			case len(a.Options) > MaxAskOptions:
				return Errorf("%d options; give at most %d, or none and let the person answer in words", len(a.Options), MaxAskOptions)
			}
			opts := make([]string, 0, len(a.Options))
			for _, o := range a.Options {
				o = strings.TrimSpace(o)
				if o == "" || len(o) > MaxOptionBytes || !utf8.ValidString(o) {
					return Errorf("each option must be UTF-8 text of 1 to %d bytes", MaxOptionBytes)
				}
				opts = append(opts, o)
			}
			return ask(ctx, q, opts)
		},
	}
}
