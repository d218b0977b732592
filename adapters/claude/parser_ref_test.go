// This file keeps the encoding/json parser that Parser replaced, unchanged
// but for its names, as the reference of the differential test.

package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

// Parser reads `claude -p --output-format stream-json --verbose` output.
// It remembers the tool calls of its turn so that a tool's result can be
// reported as the end of that call (a Bash result completes its command).
type refParser struct {
	tools    map[string]refToolUse
	msgID    string
	msgUsage refUsage
}

// NewParser returns a parser for one turn file.
func newRefParser() *refParser { return &refParser{tools: map[string]refToolUse{}} }

type refLine struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Message   *refMessage     `json:"message"`
	IsError   bool            `json:"is_error"`
	Result    json.RawMessage `json:"result"`
	APIStatus json.RawMessage `json:"api_error_status"`
	NumTurns  int             `json:"num_turns"`
	CostUSD   *float64        `json:"total_cost_usd"`
	Usage     *refUsage       `json:"usage"`
	Errors    []string        `json:"errors"`
	Denials   json.RawMessage `json:"permission_denials"`
	Models    json.RawMessage `json:"modelUsage"`
	// system/api_retry
	Attempt     int             `json:"attempt"`
	MaxRetries  int             `json:"max_retries"`
	ErrorStatus json.RawMessage `json:"error_status"`
	Error       json.RawMessage `json:"error"`
}

type refMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *refUsage       `json:"usage"`
}

type refBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type refUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

type refToolUse struct {
	name  string
	input map[string]any
}

// ParseLine implements agent.Parser.
func (p *refParser) ParseLine(raw []byte) []record.Event {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return nil
	}
	var l refLine
	if b[0] != '{' || json.Unmarshal(b, &l) != nil {
		return []record.Event{record.RawEvent(b)}
	}
	switch l.Type {
	case "system":
		return p.system(&l)
	case "assistant":
		return p.assistant(&l)
	case "user":
		return p.user(&l)
	case "result":
		return refResult(&l)
	}
	return []record.Event{{Type: record.EventUnknown, Text: l.Type}}
}

func (p *refParser) system(l *refLine) []record.Event {
	switch l.Subtype {
	case "init":
		return []record.Event{{Type: record.EventThreadStarted, ThreadID: l.SessionID}}
	case "api_retry":
		return []record.Event{{Type: record.EventRetry, Text: fmt.Sprintf("API retry %d/%d (status %s): %s",
			l.Attempt, l.MaxRetries, strings.Trim(string(l.ErrorStatus), `"`), refText(l.Error))}}
	}
	return []record.Event{{Type: record.EventUnknown, Text: "system/" + l.Subtype}}
}

func (p *refParser) assistant(l *refLine) []record.Event {
	if l.Message == nil {
		return []record.Event{{Type: record.EventUnknown, Text: "assistant"}}
	}
	var blocks []refBlock
	json.Unmarshal(l.Message.Content, &blocks)
	var out []record.Event
	if u := l.Message.Usage; u != nil && l.Message.Model != "<synthetic>" {
		cur, add := *u, *u
		if l.Message.ID != "" && l.Message.ID == p.msgID {
			last := p.msgUsage
			add = refUsage{max(0, cur.InputTokens-last.InputTokens), max(0, cur.OutputTokens-last.OutputTokens),
				max(0, cur.CacheReadInputTokens-last.CacheReadInputTokens), max(0, cur.CacheCreationInputTokens-last.CacheCreationInputTokens)}
			cur = refUsage{max(cur.InputTokens, last.InputTokens), max(cur.OutputTokens, last.OutputTokens),
				max(cur.CacheReadInputTokens, last.CacheReadInputTokens), max(cur.CacheCreationInputTokens, last.CacheCreationInputTokens)}
		} else {
			p.msgID = l.Message.ID
		}
		p.msgUsage = cur
		if add != (refUsage{}) {
			in := add.InputTokens + add.CacheReadInputTokens + add.CacheCreationInputTokens
			out = append(out, record.Event{Type: record.EventUsage, Usage: &record.Usage{InputTokens: in, CachedInputTokens: add.CacheReadInputTokens,
				CacheWriteInputTokens: add.CacheCreationInputTokens, OutputTokens: add.OutputTokens, TotalTokens: in + add.OutputTokens}})
		}
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			if l.Message.Model == "<synthetic>" {
				// claude's own words about a failure, not the model's.
				out = append(out, record.Event{Type: record.EventError, Text: bl.Text})
			} else {
				out = append(out, record.Event{Type: record.EventMessage, Phase: record.PhaseCompleted, Text: bl.Text})
			}
		case "thinking":
			out = append(out, record.Event{Type: record.EventReasoning, Phase: record.PhaseCompleted, Text: bl.Thinking})
		case "tool_use":
			out = append(out, p.refToolUse(bl))
		default:
			out = append(out, record.Event{Type: record.EventUnknown, Text: "assistant/" + bl.Type})
		}
	}
	return out
}

// toolUse maps claude's tools onto the normalized steps: Bash is a
// command, file tools are file changes, TodoWrite is a plan.
func (p *refParser) refToolUse(bl refBlock) record.Event {
	var in map[string]any
	json.Unmarshal(bl.Input, &in)
	p.tools[bl.ID] = refToolUse{name: bl.Name, input: in}
	str := func(k string) string { s, _ := in[k].(string); return s }
	ev := record.Event{Phase: record.PhaseStarted, ItemID: bl.ID, Status: "in_progress"}
	switch bl.Name {
	case "Bash":
		ev.Type, ev.Command = record.EventCommand, str("command")
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		kind := "update"
		if bl.Name == "Write" {
			kind = "add"
		}
		path := refFirstNonEmpty(str("file_path"), str("notebook_path"))
		ev.Type, ev.Changes = record.EventFileChange, []record.FileChange{{Path: path, Kind: kind}}
	case "TodoWrite":
		ev.Type, ev.Phase = record.EventTodoList, record.PhaseCompleted
		todos, _ := in["todos"].([]any)
		for _, t := range todos {
			m, _ := t.(map[string]any)
			content, _ := m["content"].(string)
			status, _ := m["status"].(string)
			ev.Todos = append(ev.Todos, record.Todo{Text: content, Completed: status == "completed"})
		}
	default:
		ev.Type, ev.Tool, ev.Input = record.EventToolCall, bl.Name, agent.CompactJSON(bl.Input)
	}
	return ev
}

func (p *refParser) user(l *refLine) []record.Event {
	if l.Message == nil {
		return nil
	}
	var blocks []refBlock
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return nil // a plain user message: the prompt, which the turn records
	}
	var out []record.Event
	for _, bl := range blocks {
		if bl.Type != "tool_result" {
			continue
		}
		res := refText(bl.Content)
		status := "completed"
		if bl.IsError {
			status = "failed"
		}
		ev := record.Event{Phase: record.PhaseCompleted, ItemID: bl.ToolUseID, Status: status}
		tu, known := p.tools[bl.ToolUseID]
		switch {
		case known && tu.name == "Bash":
			cmd, _ := tu.input["command"].(string)
			ev.Type, ev.Command, ev.Output, ev.ExitCode = record.EventCommand, cmd, res, refBashExit(res, bl.IsError)
		case known && (tu.name == "Write" || tu.name == "Edit" || tu.name == "MultiEdit" || tu.name == "NotebookEdit"):
			kind := map[bool]string{true: "add", false: "update"}[tu.name == "Write"]
			path, _ := tu.input["file_path"].(string)
			ev.Type, ev.Changes = record.EventFileChange, []record.FileChange{{Path: path, Kind: kind}}
			if bl.IsError {
				ev.Text = res
			}
		case known && tu.name == "TodoWrite":
			continue
		default:
			ev.Type, ev.Output = record.EventToolResult, res
			if known {
				ev.Tool = tu.name
			}
			if bl.IsError {
				ev.Text = res
			}
		}
		out = append(out, ev)
	}
	return out
}

// bashExit recovers a Bash call's exit code: claude reports a failure as
// an error result that starts "Exit code N", and success as a plain one.
func refBashExit(out string, isErr bool) *int {
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

// result ends a turn. Failure is is_error, never the subtype: API errors
// still say "success".
func refResult(l *refLine) []record.Event {
	var out []record.Event
	if l.IsError {
		msg := refFirstNonEmpty(refText(l.Result), strings.Join(l.Errors, "; "))
		if msg == "" {
			msg = "claude reported an error (" + l.Subtype + ")"
		}
		if st := strings.Trim(string(l.APIStatus), `"`); st != "" && st != "null" && !strings.Contains(msg, st) {
			msg += " (API status " + st + ")"
		}
		out = append(out, record.Event{Type: record.EventTurnFailed, Text: msg})
	}
	ev := record.Event{Type: record.EventTurnCompleted, CostUSD: l.CostUSD, ProcessCost: l.CostUSD != nil, Denials: Denials(l.Denials)}
	if u, ok := processUsage(l.Models); ok {
		ev.Usage, ev.ProcessUsage = u.tokens(), true
	} else if u := l.Usage; u != nil {
		// Anthropic counts cached input apart from input_tokens; zwarm's
		// input includes it, as the OpenAI APIs count.
		in := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
		ev.Usage = &record.Usage{InputTokens: in, CachedInputTokens: u.CacheReadInputTokens,
			CacheWriteInputTokens: u.CacheCreationInputTokens, OutputTokens: u.OutputTokens, TotalTokens: in + u.OutputTokens}
	}
	return append(out, ev)
}

// text reads a JSON string, or the text blocks of a content array.
func refText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []refBlock
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return agent.CompactJSON(raw)
}

func refFirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
