package codex

import (
	"strings"

	"github.com/zwarm/zwarm/sessions"
)

// mcpEvent fills in an MCP tool call. codex reports the tool's result as
// MCP gives it, {"content": [{"type": "text", "text": ...}, ...],
// "structured_content": ...}: the event's Output is its text, and Text the
// call's error. A tool that reported failure itself (MCP's isError) has a
// result and no error, only the status "failed": its text is then the
// error too.
func mcpEvent(s *scanner, ev *sessions.Event, it *item) {
	ev.Type, ev.Tool = sessions.EventToolCall, s.text(it.server)+"."+s.text(it.tool)
	ev.Input = compact(it.arguments)
	ev.Output = mcpResult(s, it.result)
	if it.hasErr {
		ev.Text = trimBacktrace(s.text(it.err.message))
	}
	if ev.Text == "" && ev.Status == "failed" {
		ev.Text = ev.Output
	}
}

// mcpResult renders an MCP tool result, raw JSON that has been validated:
// its text blocks, one after the other, with a placeholder for each block
// of another kind ("[image]"); with no content, its structured content as
// JSON; anything else as JSON. Of duplicate keys the last one counts.
func mcpResult(s *scanner, res []byte) string {
	if !isObject(res) {
		return compact(res)
	}
	var content, structured []byte
	s.reset(res)
	s.enter()
	for s.more() {
		switch s.member() {
		case "content":
			content = s.value()
		case "structured_content":
			structured = s.value()
		default:
			s.skip()
		}
	}
	hasStructured := len(structured) > 0 && string(structured) != "null"
	if !isArray(content) {
		if hasStructured {
			return compact(structured)
		}
		return compact(res)
	}
	var b strings.Builder
	n := 0
	s.reset(content)
	s.enter()
	for s.more() {
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		var typ, txt []byte
		if s.kind() == '{' {
			s.enter()
			for s.more() {
				switch s.member() {
				case "type":
					typ = s.value()
				case "text":
					txt = s.value()
				default:
					s.skip()
				}
			}
		} else {
			s.skip()
		}
		if peek(typ) == "text" {
			writeText(&b, txt, s.utf8)
		} else {
			b.WriteString("[" + firstNonEmpty(s.text(typ), "content") + "]")
		}
	}
	if n == 0 && hasStructured {
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
// kept. Any other message is returned as it is. s is free to read with.
func humanError(s *scanner, msg string) string {
	i := strings.IndexByte(msg, '{')
	if i < 0 {
		return msg
	}
	body := []byte(strings.TrimSpace(msg[i:]))
	if !s.valid(body) {
		return msg
	}
	m := s.last(s.last(body, "error"), "message")
	if !isString(m) {
		m = s.last(body, "message")
	}
	if human := strings.TrimSpace(text(m)); isString(m) && human != "" {
		return msg[:i] + human
	}
	return msg
}
