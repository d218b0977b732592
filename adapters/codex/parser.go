package codex

import (
	"bytes"
	"strings"

	"github.com/zwarm/zwarm/adapters/internal/jsonscan"
	"github.com/zwarm/zwarm/sessions/record"
)

// Parser reads `codex exec --json` output. Every line stands alone, so a
// reader may start at any line boundary; the parser only reuses its
// buffers from one line to the next.
type Parser struct {
	s   jsonscan.Scanner
	l   line
	out []record.Event
	// id and command are the last of each decoded: an item's started
	// and completed lines repeat them.
	id, command repeat
}

// repeat keeps the last text decoded for a field, with the raw JSON it
// came from, so a value the next line repeats costs a comparison, not a
// string.
type repeat struct {
	raw  []byte
	text string
}

func (r *repeat) decode(s *jsonscan.Scanner, raw []byte) string {
	if !bytes.Equal(raw, r.raw) || r.raw == nil {
		r.raw, r.text = append(r.raw[:0], raw...), s.Text(raw)
	}
	return r.text
}

// NewParser returns a parser for one turn file.
func NewParser() *Parser { return &Parser{} }

// ParseLine implements agent.Parser. The events it returns are valid
// until the next call.
func (p *Parser) ParseLine(raw []byte) []record.Event {
	clear(p.out)
	p.out = p.out[:0]
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return nil
	}
	if b[0] != '{' || !p.l.decode(&p.s, b) {
		return p.emit(record.RawEvent(b))
	}
	l := &p.l
	typ := jsonscan.Peek(l.typ) // a view into the line: compared, never kept
	switch typ {
	case "thread.started":
		return p.emit(record.Event{Type: record.EventThreadStarted, ThreadID: p.s.Text(l.threadID)})
	case "turn.started":
		return p.emit(record.Event{Type: record.EventTurnStarted})
	case "turn.completed":
		ev := record.Event{Type: record.EventTurnCompleted, Cumulative: true}
		if l.hasUsage {
			u := l.usage
			ev.Usage = &record.Usage{InputTokens: u.input, CachedInputTokens: u.cached, CacheWriteInputTokens: u.cacheWrite,
				OutputTokens: u.output, ReasoningOutputTokens: u.reasoning, TotalTokens: u.total}
			if ev.Usage.TotalTokens == 0 {
				ev.Usage.TotalTokens = u.input + u.output
			}
		}
		return p.emit(ev)
	case "turn.failed":
		msg := ""
		if l.hasErr {
			msg = humanError(&p.s, p.s.Text(l.err.message))
		}
		return p.emit(record.Event{Type: record.EventTurnFailed, Text: msg})
	case "error":
		msg := messageText(&p.s, l.message)
		if strings.HasPrefix(msg, "Reconnecting") {
			return p.emit(record.Event{Type: record.EventRetry, Text: msg})
		}
		return p.emit(record.Event{Type: record.EventError, Text: humanError(&p.s, msg)})
	case "item.started":
		return p.item(record.PhaseStarted)
	case "item.updated":
		return p.item(record.PhaseUpdated)
	case "item.completed":
		return p.item(record.PhaseCompleted)
	}
	return p.emit(record.Event{Type: record.EventUnknown, Text: p.s.Text(l.typ)})
}

// item is the event of an item line, made in place.
func (p *Parser) item(ph record.Phase) []record.Event {
	if !p.l.hasItem {
		return p.emit(record.Event{Type: record.EventUnknown, Text: p.s.Text(p.l.typ)})
	}
	p.out = append(p.out, record.Event{})
	ev, it := &p.out[len(p.out)-1], &p.l.item
	itemEvent(ev, &p.s, ph, it)
	ev.ItemID = p.id.decode(&p.s, it.id)
	if ev.Type == record.EventCommand {
		ev.Command = p.command.decode(&p.s, it.command)
	}
	return p.out
}

func (p *Parser) emit(ev record.Event) []record.Event {
	p.out = append(p.out, ev)
	return p.out
}

// itemEvent makes the event of an item in ev, which is empty, but for
// its id and a command's command line; s is free to read its raw JSON.
func itemEvent(ev *record.Event, s *jsonscan.Scanner, ph record.Phase, it *item) {
	ev.Phase, ev.Status = ph, known(s, it.status)
	switch jsonscan.Peek(it.typ) {
	case "agent_message":
		ev.Type, ev.Text = record.EventMessage, s.Text(it.text)
	case "reasoning":
		ev.Type, ev.Text = record.EventReasoning, s.Text(it.text)
	case "command_execution":
		ev.Type, ev.Output = record.EventCommand, s.Text(it.output)
		if it.hasExit {
			code := int(it.exitCode)
			ev.ExitCode = &code
		}
	case "file_change":
		ev.Type = record.EventFileChange
		for _, c := range it.changes {
			ev.Changes = append(ev.Changes, record.FileChange{Path: s.Text(c.path), Kind: known(s, c.kind)})
		}
	case "todo_list":
		ev.Type = record.EventTodoList
		for _, t := range it.todos {
			ev.Todos = append(ev.Todos, record.Todo{Text: s.Text(t.text), Completed: t.completed})
		}
	case "mcp_tool_call":
		mcpEvent(s, ev, it)
	case "web_search":
		// The line names "id" twice; the last one is kept, as encoding/json
		// does. Item ids of web searches are unreliable.
		ev.Type, ev.Tool, ev.Input = record.EventToolCall, "web_search", s.Text(it.query)
	case "error":
		ev.Type, ev.Text = record.EventError, firstNonEmpty(s.Text(it.message), s.Text(it.text))
	default:
		ev.Type, ev.Text = record.EventUnknown, "item:"+s.Text(it.typ)
	}
}

// known returns the words codex repeats on every line (statuses, kinds
// of change) without copying them out of the line again.
func known(s *jsonscan.Scanner, v []byte) string {
	switch string(v) {
	case `"completed"`:
		return "completed"
	case `"in_progress"`:
		return "in_progress"
	case `"failed"`:
		return "failed"
	case `"add"`:
		return "add"
	case `"update"`:
		return "update"
	case `"delete"`:
		return "delete"
	}
	return s.Text(v)
}

// messageText reads a top-level error message, which is a string.
func messageText(s *jsonscan.Scanner, v []byte) string {
	if jsonscan.IsString(v) {
		return s.Text(v)
	}
	return jsonscan.Compact(v)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
