package codex

import (
	"strings"

	"github.com/zwarm/zwarm/adapters/internal/jsonscan"
	"github.com/zwarm/zwarm/sessions/record"
)

// mcpEvent fills in an MCP tool call. codex reports the tool's result as
// MCP gives it, {"content": [{"type": "text", "text": ...}, ...],
// "structured_content": ...}: the event's Output is its text, and Text the
// call's error. A tool that reported failure itself (MCP's isError) has a
// result and no error, only the status "failed": its text is then the
// error too.
func mcpEvent(s *jsonscan.Scanner, ev *record.Event, it *item) {
	ev.Type, ev.Tool = record.EventToolCall, s.Text(it.server)+"."+s.Text(it.tool)
	ev.Input = jsonscan.Compact(it.arguments)
	ev.Output = mcpResult(s, it.result)
	if it.hasErr {
		ev.Text = trimBacktrace(s.Text(it.err.message))
	}
	if ev.Text == "" && ev.Status == "failed" {
		ev.Text = ev.Output
	}
}

// mcpResult renders an MCP tool result, raw JSON that has been validated:
// its text blocks, one after the other, with a placeholder for each block
// of another kind ("[image]"); with no content, its structured content as
// JSON; anything else as JSON. Of duplicate keys the last one counts.
func mcpResult(s *jsonscan.Scanner, res []byte) string {
	if !jsonscan.IsObject(res) {
		return jsonscan.Compact(res)
	}
	var content, structured []byte
	s.Reset(res)
	s.Enter()
	for s.More() {
		switch s.Member() {
		case "content":
			content = s.Value()
		case "structured_content":
			structured = s.Value()
		default:
			s.Skip()
		}
	}
	hasStructured := len(structured) > 0 && string(structured) != "null"
	if !jsonscan.IsArray(content) {
		if hasStructured {
			return jsonscan.Compact(structured)
		}
		return jsonscan.Compact(res)
	}
	var b strings.Builder
	n := 0
	s.Reset(content)
	s.Enter()
	for s.More() {
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		var typ, txt []byte
		if s.Kind() == '{' {
			s.Enter()
			for s.More() {
				switch s.Member() {
				case "type":
					typ = s.Value()
				case "text":
					txt = s.Value()
				default:
					s.Skip()
				}
			}
		} else {
			s.Skip()
		}
		if jsonscan.Peek(typ) == "text" {
			jsonscan.WriteText(&b, txt, s.ValidUTF8())
		} else {
			b.WriteString("[" + firstNonEmpty(s.Text(typ), "content") + "]")
		}
	}
	if n == 0 && hasStructured {
		return jsonscan.Compact(structured)
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
func humanError(s *jsonscan.Scanner, msg string) string {
	i := strings.IndexByte(msg, '{')
	if i < 0 {
		return msg
	}
	body := []byte(strings.TrimSpace(msg[i:]))
	if !s.Valid(body) {
		return msg
	}
	m := s.Last(s.Last(body, "error"), "message")
	if !jsonscan.IsString(m) {
		m = s.Last(body, "message")
	}
	if human := strings.TrimSpace(jsonscan.Text(m)); jsonscan.IsString(m) && human != "" {
		return msg[:i] + human
	}
	return msg
}
