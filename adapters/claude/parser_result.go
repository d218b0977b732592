package claude

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zwarm/zwarm/adapters/internal/jsonscan"
	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

// result ends a turn: one turn.completed, or one turn.failed when claude
// gave up. Failure is is_error, never the subtype: API errors still say
// "success". Both carry the usage and cost claude reports, which a failed
// turn has too.
func (p *Parser) result(l *line) record.Event {
	ev := record.Event{Type: record.EventTurnCompleted}
	if l.isError {
		ev.Type, ev.Text = record.EventTurnFailed, p.failure(l)
	}
	if l.hasCost {
		cost := l.cost
		ev.CostUSD, ev.ProcessCost = &cost, true
	}
	if u, ok := processUsage(l.modelUsage); ok {
		ev.Usage, ev.ProcessUsage = u.tokens(), true
	} else if l.hasUsage {
		ev.Usage = l.usage.tokens()
	}
	ev.Denials = Denials(l.denials)
	return ev
}

// processUsage reads a result's modelUsage, the tokens of every model
// call the claude process made so far by model ({"claude-…": {inputTokens,
// outputTokens, cacheReadInputTokens, cacheCreationInputTokens, …}}), as
// one sum. Unlike the result's usage, which is the turn's calls of the
// main agent alone, it counts the calls of its subagents (the Task tool)
// and its side calls; over the turns of one live process it runs on. It
// is read leniently: ok is false, and the turn's usage counts, when it is
// absent, empty or not what it should be.
func processUsage(raw []byte) (u usage, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return usage{}, false
	}
	var models map[string]struct {
		Input         int64 `json:"inputTokens"`
		Output        int64 `json:"outputTokens"`
		CacheRead     int64 `json:"cacheReadInputTokens"`
		CacheCreation int64 `json:"cacheCreationInputTokens"`
	}
	if json.Unmarshal(raw, &models) != nil || len(models) == 0 {
		return usage{}, false
	}
	for _, m := range models {
		u.input, u.output = u.input+m.Input, u.output+m.Output
		u.cacheRead, u.cacheCreation = u.cacheRead+m.CacheRead, u.cacheCreation+m.CacheCreation
	}
	return u, true
}

// maxDenialInput shortens what a denied call was asked to do.
const maxDenialInput = 200

// Denials reads a result's permission_denials: the tool calls claude's
// permissions refused in the turn ([{tool_name, tool_use_id, tool_input}]).
// It is read leniently: anything else is no denial. Bash calls are shown
// by their command, file tools by their path, others as compact JSON.
func Denials(raw []byte) []record.Denial {
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	var list []struct {
		Tool  string          `json:"tool_name"`
		Input json.RawMessage `json:"tool_input"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []record.Denial
	for _, d := range list {
		var in struct {
			Command  string `json:"command"`
			FilePath string `json:"file_path"`
		}
		text := ""
		if json.Unmarshal(d.Input, &in) == nil && (in.Command != "" || in.FilePath != "") {
			text = in.Command
			if text == "" {
				text = in.FilePath
			}
		} else if len(d.Input) > 0 {
			text = agent.CompactJSON(d.Input)
		}
		if r := []rune(text); len(r) > maxDenialInput {
			text = string(r[:maxDenialInput-1]) + "…"
		}
		out = append(out, record.Denial{Tool: d.Tool, Input: text})
	}
	return out
}

// failure says why a turn failed: claude's result text or its errors, and
// the HTTP status of the API error if the text does not already say it.
func (p *Parser) failure(l *line) string {
	msg := p.contentText(l.result)
	if msg == "" {
		errs := make([]string, len(l.errors))
		for i, e := range l.errors {
			errs[i] = p.s.Text(e)
		}
		msg = strings.Join(errs, "; ")
	}
	if msg == "" {
		msg = "claude reported an error (" + p.s.Text(l.subtype) + ")"
	}
	if st := strings.Trim(string(l.apiStatus), `"`); st != "" && st != "null" && !strings.Contains(msg, st) {
		msg += " (API status " + st + ")"
	}
	return msg
}

// retryText describes a system/api_retry line from what it says: the
// attempt, the delay, the HTTP status if there was a response (claude
// reports null when the connection itself failed) and the kind of error
// if claude knows it ("unknown" says nothing), e.g.
// "API retry 2/10 in 1.2s: HTTP 529 overloaded" or
// "API retry 1/10 in 0.6s: connection error".
func retryText(l *line) string {
	var b strings.Builder
	fmt.Fprintf(&b, "API retry %d", l.attempt)
	if l.maxRetries > 0 {
		fmt.Fprintf(&b, "/%d", l.maxRetries)
	}
	if ms := number(l.retryDelay); ms > 0 {
		b.WriteString(" in " + delay(ms))
	}
	var why []string
	switch st := l.errorStatus; {
	case isNumber(st):
		why = append(why, "HTTP "+string(st))
	case jsonscan.IsString(st):
		why = append(why, "HTTP "+jsonscan.Text(st))
	}
	kind := jsonscan.Text(l.err)
	if !jsonscan.IsString(l.err) {
		kind = jsonscan.Compact(l.err)
	}
	if kind != "" && kind != "unknown" {
		why = append(why, strings.ReplaceAll(kind, "_", " "))
	}
	if len(why) == 0 && string(l.errorStatus) == "null" {
		why = append(why, "connection error")
	}
	if len(why) > 0 {
		b.WriteString(": " + strings.Join(why, " "))
	}
	return b.String()
}

func isNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// number is the raw JSON value as a float64, out-of-range numbers as
// infinities; 0 if it is not a number.
func number(raw []byte) float64 {
	if !isNumber(raw) {
		return 0
	}
	n, _ := strconv.ParseFloat(jsonscan.View(raw), 64)
	return n
}

// delay renders a retry delay given in milliseconds.
func delay(ms float64) string {
	if ms < 100 {
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	}
	if ms < 10000 {
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + "s"
	}
	return strconv.FormatFloat(ms/1000, 'f', 0, 64) + "s"
}

// tokens is u as zwarm counts it. Anthropic counts cached input apart from
// input_tokens; zwarm's input includes it, as the OpenAI APIs count.
func (u usage) tokens() *record.Usage {
	in := u.input + u.cacheRead + u.cacheCreation
	return &record.Usage{InputTokens: in, CachedInputTokens: u.cacheRead,
		CacheWriteInputTokens: u.cacheCreation, OutputTokens: u.output, TotalTokens: in + u.output}
}
