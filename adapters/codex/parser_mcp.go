package codex

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/zwarm/zwarm/sessions"
)

// mcpEvent fills in an MCP tool call. codex reports the tool's result as
// MCP gives it, {"content": [{"type": "text", "text": ...}, ...],
// "structured_content": ...}: the event's Output is its text, and Text the
// call's error. A tool that reported failure itself (MCP's isError) has a
// result and no error, only the status "failed": its text is then the
// error too.
func mcpEvent(ev *sessions.Event, it *item) {
	ev.Type, ev.Tool = sessions.EventToolCall, text(it.server)+"."+text(it.tool)
	ev.Input = compact(it.arguments)
	ev.Output = mcpResult(it.result)
	if it.hasErr {
		ev.Text = trimBacktrace(text(it.err.message))
	}
	if ev.Text == "" && ev.Status == "failed" {
		ev.Text = ev.Output
	}
}

// mcpResult renders an MCP tool result: its text blocks, one after the
// other, with a placeholder for each block of another kind ("[image]");
// with no content, its structured content as JSON; anything else as JSON.
func mcpResult(res gjson.Result) string {
	if !isObject(res) {
		return compact(res)
	}
	content, structured := last(res, "content"), last(res, "structured_content")
	if !isArray(content) {
		if structured.Exists() && structured.Type != gjson.Null {
			return compact(structured)
		}
		return compact(res)
	}
	var b strings.Builder
	n := 0
	content.ForEach(func(_, block gjson.Result) bool {
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		if typ := last(block, "type"); typ.Str == "text" {
			writeText(&b, last(block, "text"))
		} else {
			b.WriteString("[" + firstNonEmpty(text(typ), "content") + "]")
		}
		return true
	})
	if n == 0 && structured.Exists() && structured.Type != gjson.Null {
		return compact(structured)
	}
	return b.String()
}

// trimBacktrace drops the stack trace codex appends to some errors: its
// frames are unsymbolized ("<unknown>") and say nothing to a user.
func trimBacktrace(msg string) string {
	if i := strings.Index(msg, "\n\nStack backtrace:"); i >= 0 {
		return msg[:i]
	}
	return msg
}

// humanError extracts the message of a model API error that codex passes
// on as the raw response body, `{"error": {"message": "..."}}`, alone or
// after a prefix such as "unexpected status 400 Bad Request: ", which is
// kept. Any other message is returned as it is.
func humanError(msg string) string {
	i := strings.IndexByte(msg, '{')
	if i < 0 {
		return msg
	}
	body := strings.TrimSpace(msg[i:])
	if !validJSON([]byte(body)) {
		return msg
	}
	doc := gjson.Parse(body)
	m := last(last(doc, "error"), "message")
	if m.Type != gjson.String {
		m = last(doc, "message")
	}
	if human := strings.TrimSpace(text(m)); m.Type == gjson.String && human != "" {
		return msg[:i] + human
	}
	return msg
}
