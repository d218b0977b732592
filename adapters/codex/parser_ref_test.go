// This file keeps the encoding/json parser that Parser replaced, unchanged
// but for its names, as the reference of the differential test.

package codex

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

// Parser reads `codex exec --json` output. It is stateless: every line
// stands alone, so a reader may start at any line boundary.
type refParser struct{}

// NewParser returns a parser for one turn file.
func newRefParser() *refParser { return &refParser{} }

type refLine struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Item     *refItem        `json:"item"`
	Usage    *refUsage       `json:"usage"`
	Error    *refErrObj      `json:"error"`
	Message  json.RawMessage `json:"message"`
}

type refErrObj struct {
	Message string `json:"message"`
}

type refUsage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	TotalTokens           int64 `json:"total_tokens"`
}

type refItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Changes          []refChange     `json:"changes"`
	Items            []refTodo       `json:"items"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            *refErrObj      `json:"error"`
	Query            string          `json:"query"`
	Message          string          `json:"message"`
}

type refChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

type refTodo struct {
	Text      string `json:"text"`
	Completed bool   `json:"completed"`
}

// ParseLine implements agent.Parser.
func (*refParser) ParseLine(raw []byte) []record.Event {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return nil
	}
	if b[0] != '{' {
		return []record.Event{record.RawEvent(b)}
	}
	var l refLine
	if err := json.Unmarshal(b, &l); err != nil {
		return []record.Event{record.RawEvent(b)}
	}
	switch l.Type {
	case "thread.started":
		return []record.Event{{Type: record.EventThreadStarted, ThreadID: l.ThreadID}}
	case "turn.started":
		return []record.Event{{Type: record.EventTurnStarted}}
	case "turn.completed":
		ev := record.Event{Type: record.EventTurnCompleted, Cumulative: true}
		if l.Usage != nil {
			u := record.Usage(*l.Usage)
			if u.TotalTokens == 0 {
				u.TotalTokens = u.InputTokens + u.OutputTokens
			}
			ev.Usage = &u
		}
		return []record.Event{ev}
	case "turn.failed":
		msg := ""
		if l.Error != nil {
			msg = l.Error.Message
		}
		return []record.Event{{Type: record.EventTurnFailed, Text: msg}}
	case "error":
		msg := refMessageText(l.Message)
		if strings.HasPrefix(msg, "Reconnecting") {
			return []record.Event{{Type: record.EventRetry, Text: msg}}
		}
		return []record.Event{{Type: record.EventError, Text: msg}}
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil {
			return []record.Event{{Type: record.EventUnknown, Text: l.Type}}
		}
		return []record.Event{refItemEvent(record.Phase(strings.TrimPrefix(l.Type, "item.")), l.Item)}
	}
	return []record.Event{{Type: record.EventUnknown, Text: l.Type}}
}

func refItemEvent(ph record.Phase, it *refItem) record.Event {
	ev := record.Event{Phase: ph, ItemID: it.ID, Status: it.Status}
	switch it.Type {
	case "agent_message":
		ev.Type, ev.Text = record.EventMessage, it.Text
	case "reasoning":
		ev.Type, ev.Text = record.EventReasoning, it.Text
	case "command_execution":
		ev.Type, ev.Command, ev.Output, ev.ExitCode = record.EventCommand, it.Command, it.AggregatedOutput, it.ExitCode
	case "file_change":
		ev.Type = record.EventFileChange
		for _, c := range it.Changes {
			ev.Changes = append(ev.Changes, record.FileChange(c))
		}
	case "todo_list":
		ev.Type = record.EventTodoList
		for _, t := range it.Items {
			ev.Todos = append(ev.Todos, record.Todo(t))
		}
	case "mcp_tool_call":
		ev.Type, ev.Tool = record.EventToolCall, it.Server+"."+it.Tool
		ev.Input = agent.CompactJSON(it.Arguments)
		ev.Output = agent.CompactJSON(it.Result)
		if it.Error != nil {
			ev.Text = it.Error.Message
		}
	case "web_search":
		// The line names "id" twice; item ids of web searches are unreliable.
		ev.Type, ev.Tool, ev.Input = record.EventToolCall, "web_search", it.Query
	case "error":
		ev.Type, ev.Text = record.EventError, refFirstNonEmpty(it.Message, it.Text)
	default:
		ev.Type, ev.Text = record.EventUnknown, "item:"+it.Type
	}
	return ev
}

// messageText reads a top-level error message, which is a string.
func refMessageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
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
