package record

import "strings"

// EventType names a normalized event. Every adapter's parser turns its agent's
// raw output lines into these; doc.go describes each one.
type EventType string

const (
	EventThreadStarted EventType = "thread.started"
	EventTurnStarted   EventType = "turn.started"
	EventMessage       EventType = "message"
	EventReasoning     EventType = "reasoning"
	EventCommand       EventType = "command"
	EventFileChange    EventType = "file_change"
	EventTodoList      EventType = "todo_list"
	EventToolCall      EventType = "tool_call"
	EventToolResult    EventType = "tool_result"
	EventUsage         EventType = "usage"
	EventTurnCompleted EventType = "turn.completed"
	EventTurnFailed    EventType = "turn.failed"
	EventError         EventType = "error"
	EventRetry         EventType = "retry"
	EventUnknown       EventType = "unknown"
	EventRaw           EventType = "raw"
)

// Phase is where an item is: an agent may report an item when it starts, while
// it changes, and when it completes.
type Phase string

const (
	PhaseStarted   Phase = "started"
	PhaseUpdated   Phase = "updated"
	PhaseCompleted Phase = "completed"
)

// Event is one normalized agent event. Only the fields that matter for its
// Type are set.
type Event struct {
	Type     EventType `json:"type"`
	Phase    Phase     `json:"phase,omitempty"`
	ItemID   string    `json:"item_id,omitempty"`
	ThreadID string    `json:"thread_id,omitempty"`
	// Text is the message, reasoning, error or raw line.
	Text string `json:"text,omitempty"`
	// Command, Output and ExitCode describe a shell command (EventCommand).
	Command  string `json:"command,omitempty"`
	Output   string `json:"output,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// Status is the item's own status as the agent reports it
	// (in_progress, completed, failed, ...).
	Status  string       `json:"status,omitempty"`
	Changes []FileChange `json:"changes,omitempty"`
	Todos   []Todo       `json:"todos,omitempty"`
	// Tool and Input describe a tool call; Output holds its result and Text
	// its error, if any.
	Tool  string `json:"tool,omitempty"`
	Input string `json:"input,omitempty"`
	// Usage is set on EventTurnCompleted (and turn.failed), and on
	// EventUsage, which is one model call's usage as the turn goes, before
	// the turn's own report. Cumulative says it is the running total of
	// the whole thread (codex) rather than this turn's own (claude).
	Usage      *Usage `json:"usage,omitempty"`
	Cumulative bool   `json:"cumulative,omitempty"`
	// CostUSD is a price the agent computed itself; ProcessCost says it is
	// the running total of the agent process (claude's total_cost_usd over
	// the turns of one live process) rather than this turn's own.
	CostUSD     *float64 `json:"cost_usd,omitempty"`
	ProcessCost bool     `json:"process_cost,omitempty"`
	// ProcessUsage says Usage is the running total of the agent process
	// (claude's modelUsage: its subagents' calls included, which its
	// per-turn usage leaves out) rather than this turn's own.
	ProcessUsage bool `json:"process_usage,omitempty"`
	// Denials are the tool calls the agent's permissions refused during
	// the turn (claude's permission_denials), on turn.completed and
	// turn.failed.
	Denials []Denial `json:"denials,omitempty"`
}

// Denial is a tool call an agent's permissions refused: the tool, and
// what it was asked to do (a command, a path), shortened.
type Denial struct {
	Tool  string `json:"tool"`
	Input string `json:"input,omitempty"`
}

// FileChange is one file an agent added, updated or deleted.
type FileChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// Todo is one entry of an agent's plan.
type Todo struct {
	Text      string `json:"text"`
	Completed bool   `json:"completed"`
}

// maxRawText bounds the text of a raw event.
const maxRawText = 4096

// RawEvent keeps a line that is not an event (stderr mixed in, a line cut
// short by a kill), as valid UTF-8 and bounded in size.
func RawEvent(line []byte) Event {
	if len(line) > maxRawText {
		line = line[:maxRawText]
	}
	return Event{Type: EventRaw, Text: strings.ToValidUTF8(string(line), "\uFFFD")}
}
