package claude

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/zwarm/zwarm/adapters/internal/jsonscan"
	"github.com/zwarm/zwarm/sessions/record"
)

// Parser reads `claude -p --output-format stream-json --verbose` output.
// It keeps state for one turn file: the tool calls whose results have not
// come yet, so that a result is reported as the end of its call (a Bash
// result completes its command), and the task list claude keeps with its
// task tools (see plan).
type Parser struct {
	tools map[string]toolUse
	plan  plan
	// msgID and msgUsage are the latest model message's, whose usage was
	// told: its further lines (one per content block) tell only what grew.
	msgID    string
	msgUsage usage

	s, t  jsonscan.Scanner // s reads the line (and decodes its strings), t values within what s reads
	l     line
	inner []block // the content blocks of a tool result
	out   []record.Event
}

// NewParser returns a parser for one turn file.
func NewParser() *Parser { return &Parser{tools: map[string]toolUse{}} }

// toolUse is a tool call waiting for its result, with the parts of its
// input the result's event needs.
type toolUse struct {
	name    string
	command string // Bash
	path    string // file tools
	task    taskInput
}

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
	switch jsonscan.Peek(p.l.typ) { // a view into the line: compared, never kept
	case "system":
		p.system(&p.l)
	case "assistant":
		p.assistant(&p.l)
	case "user":
		p.user(&p.l)
	case "result":
		p.emit(p.result(&p.l))
	default:
		p.emit(record.Event{Type: record.EventUnknown, Text: p.s.Text(p.l.typ)})
	}
	return p.out
}

func (p *Parser) emit(ev record.Event) []record.Event {
	p.out = append(p.out, ev)
	return p.out
}

func (p *Parser) system(l *line) {
	switch jsonscan.Peek(l.subtype) {
	case "init":
		p.emit(record.Event{Type: record.EventThreadStarted, ThreadID: p.s.Text(l.sessionID)})
	case "api_retry":
		p.emit(record.Event{Type: record.EventRetry, Text: retryText(l)})
	default:
		p.emit(record.Event{Type: record.EventUnknown, Text: "system/" + p.s.Text(l.subtype)})
	}
}

func (p *Parser) assistant(l *line) {
	if !l.hasMsg {
		p.emit(record.Event{Type: record.EventUnknown, Text: "assistant"})
		return
	}
	p.messageUsage(&l.msg)
	// Entries of the wrong shape are read as far as they go, as the
	// parser before this one did.
	for i := range l.msg.content {
		bl := &l.msg.content[i]
		switch jsonscan.Peek(bl.typ) {
		case "text":
			if jsonscan.Peek(l.msg.model) == "<synthetic>" {
				// claude's own words about a failure, not the model's.
				p.emit(record.Event{Type: record.EventError, Text: p.s.Text(bl.text)})
			} else {
				p.emit(record.Event{Type: record.EventMessage, Phase: record.PhaseCompleted, Text: p.s.Text(bl.text)})
			}
		case "thinking":
			p.emit(record.Event{Type: record.EventReasoning, Phase: record.PhaseCompleted, Text: p.s.Text(bl.thinking)})
		case "tool_use":
			p.toolUse(bl)
		default:
			p.emit(record.Event{Type: record.EventUnknown, Text: "assistant/" + p.s.Text(bl.typ)})
		}
	}
}

// messageUsage tells what a model message used, as soon as it comes, so
// that the turn's cost is known call by call (the result's usage replaces
// it at the end). claude repeats a message's usage on each of its lines,
// one per content block: a message is counted once, a later line adding
// only what grew.
func (p *Parser) messageUsage(m *message) {
	if !m.hasUsage || jsonscan.Peek(m.model) == "<synthetic>" {
		return
	}
	cur, add := m.usage, m.usage
	if id := jsonscan.Peek(m.id); id != "" && id == p.msgID {
		add = usage{input: max(0, cur.input-p.msgUsage.input), output: max(0, cur.output-p.msgUsage.output),
			cacheRead: max(0, cur.cacheRead-p.msgUsage.cacheRead), cacheCreation: max(0, cur.cacheCreation-p.msgUsage.cacheCreation)}
		cur = usage{input: max(cur.input, p.msgUsage.input), output: max(cur.output, p.msgUsage.output),
			cacheRead: max(cur.cacheRead, p.msgUsage.cacheRead), cacheCreation: max(cur.cacheCreation, p.msgUsage.cacheCreation)}
	} else {
		p.msgID = p.s.Text(m.id)
	}
	p.msgUsage = cur
	if add == (usage{}) {
		return
	}
	p.emit(record.Event{Type: record.EventUsage, Usage: add.tokens()})
}

func (p *Parser) user(l *line) {
	if !l.hasMsg {
		return
	}
	if !l.msg.isArray || l.msg.mismatch {
		return // a plain user message: the prompt, which the turn records
	}
	results := 0
	for i := range l.msg.content {
		if jsonscan.Peek(l.msg.content[i].typ) == "tool_result" {
			results++
		}
	}
	for i := range l.msg.content {
		bl := &l.msg.content[i]
		if jsonscan.Peek(bl.typ) != "tool_result" {
			continue
		}
		id := p.s.Text(bl.toolUseID)
		res := p.contentText(bl.content)
		status := "completed"
		if bl.isError {
			status = "failed"
		}
		ev := record.Event{Phase: record.PhaseCompleted, ItemID: id, Status: status}
		tu, known := p.tools[id]
		delete(p.tools, id) // a call has one result: keep only calls in flight
		switch {
		case known && tu.name == "Bash":
			ev.Type, ev.Command, ev.Output, ev.ExitCode = record.EventCommand, tu.command, res, bashExit(res, bl.isError)
		case known && fileTools[tu.name]:
			kind := "update"
			if tu.name == "Write" {
				kind = "add"
			}
			ev.Type, ev.Changes = record.EventFileChange, []record.FileChange{{Path: tu.path, Kind: kind}}
			if bl.isError {
				ev.Text = res
			}
		case known && tu.name == "TodoWrite" && !bl.isError:
			continue // the plan was shown with the call
		case known && taskTools[tu.name]:
			// The line's tool_use_result belongs to its only result.
			var structured []byte
			if results == 1 {
				structured = l.toolUseResult
			}
			p.taskResult(ev, tu, res, bl.isError, structured)
			continue
		default:
			ev.Type, ev.Output = record.EventToolResult, res
			if known {
				ev.Tool = tu.name
			}
			if bl.isError {
				ev.Text = res
			}
		}
		p.emit(ev)
	}
}

var fileTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// bashExit recovers a Bash call's exit code: claude reports a failure as
// an error result that starts "Exit code N", and success as a plain one.
func bashExit(out string, isErr bool) *int {
	code := 0
	if isErr {
		rest, ok := strings.CutPrefix(out, "Exit code ")
		if !ok {
			return nil
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		n, err := strconv.Atoi(rest[:end])
		if err != nil {
			return nil
		}
		code = n
	}
	return &code
}

// contentText reads a tool result's content: a string, or the text of a
// content array's entries, or else the content as JSON.
func (p *Parser) contentText(v []byte) string {
	switch {
	case len(v) == 0 || string(v) == "null":
		return ""
	case jsonscan.IsString(v):
		return p.s.Text(v)
	case !jsonscan.IsArray(v):
		return jsonscan.Compact(v)
	}
	var mismatch bool
	p.t.Reset(v)
	if p.inner, _, mismatch = blocks(&p.t, p.inner); mismatch {
		return jsonscan.Compact(v)
	}
	// The entries with text, one per line.
	var b strings.Builder
	var first []byte
	n := 0
	for _, bl := range p.inner {
		if !jsonscan.IsString(bl.text) || string(bl.text) == `""` {
			continue
		}
		switch n++; n {
		case 1:
			first = bl.text
			continue
		case 2:
			jsonscan.WriteText(&b, first, p.s.ValidUTF8())
		}
		b.WriteByte('\n')
		jsonscan.WriteText(&b, bl.text, p.s.ValidUTF8())
	}
	if n < 2 {
		return p.s.Text(first)
	}
	return b.String()
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
