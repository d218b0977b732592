package runs

import (
	"encoding/json"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

// EventType names a line of events.jsonl.
type EventType string

const (
	EventStarted       EventType = "run_started"    // Task, Model, Dir, Limits
	EventResumed       EventType = "run_resumed"    // Text: what was repaired
	EventModelCall     EventType = "model_call"     // Step, InputItems, EstimatedTokens, Observation
	EventModelResponse EventType = "model_response" // Step, DurationMS, Items, Text, Reasoning
	EventUsage         EventType = "usage"          // Step, Usage and CostUSD of the call, Totals
	EventRetry         EventType = "retry"          // Attempt, Status, Error: a failed API attempt or a broken stream
	EventToolCall      EventType = "tool_call"      // Step, CallID, Tool, Args
	EventToolResult    EventType = "tool_result"    // Step, CallID, Tool, Output (bounded), IsError, DurationMS
	EventWorker        EventType = "worker"         // Session, Text: a worker finished while a tool ran
	EventCompaction    EventType = "compaction"     // Compaction
	EventGuard         EventType = "guard"          // Watcher, Action, Text
	EventLimit         EventType = "limit"          // Limit, Text
	EventNotice        EventType = "notice"         // Text: something the run worked around
	EventStopped       EventType = "run_stopped"    // RunStatus, Reason, Summary, Error
	// The person in the loop: a message of theirs reached the model
	// (before the step's model call), the model asked them something
	// (the run waits), and the answer came, or did not.
	EventMessage  EventType = "user_message" // Step, Text, Inbox; QuestionID for an answer that came after its question was gone
	EventQuestion EventType = "question"     // Step, QuestionID, Text, Options
	EventAnswer   EventType = "answer"       // Step, QuestionID, Text, Via, Inbox (via inbox)
	// A pilot run goes turn by turn (Record.Pilot): the person's turn is
	// a user_message with its Turn; a turn ends when the model answers,
	// or is stopped; the person may rewind the conversation to the end
	// of an earlier turn.
	EventTurnEnded EventType = "turn_ended" // Step, Turn, Reason (TurnAnswered, TurnStopped, TurnFailed), Text
	EventRewind    EventType = "rewind"     // Step, Turn: the checkpoint gone back to, Text: what was dropped
)

// How a pilot turn ended (Event.Reason of turn_ended).
const (
	TurnAnswered = "answered" // the model answered the person
	TurnStopped  = "stopped"  // the person stopped it (Ctrl+C), or its timeout passed
	TurnFailed   = "failed"   // the model API failed; the run goes on
)

// Where an answer came from (Event.Via).
const (
	AnswerTerminal = "terminal" // the prompt on the terminal that runs the run
	AnswerInbox    = "inbox"    // the run's inbox: zwarm runs answer
	AnswerTimeout  = "timeout"  // none came within ask_timeout
)

// Event is one line of events.jsonl. Only the fields of its type are set.
type Event struct {
	Time time.Time `json:"time"`
	Type EventType `json:"type"`
	Run  string    `json:"run"`
	Step int       `json:"step,omitempty"`

	Task   string  `json:"task,omitempty"`
	Model  string  `json:"model,omitempty"`
	Dir    string  `json:"dir,omitempty"`
	Limits *Limits `json:"limits,omitempty"`

	InputItems      int    `json:"input_items,omitempty"`
	EstimatedTokens int64  `json:"estimated_tokens,omitempty"`
	Observation     string `json:"observation,omitempty"`

	DurationMS int64    `json:"duration_ms,omitempty"`
	Items      []string `json:"items,omitempty"`
	Text       string   `json:"text,omitempty"`
	Reasoning  string   `json:"reasoning,omitempty"`

	Usage   *record.Usage `json:"usage,omitempty"`
	CostUSD *float64      `json:"cost_usd,omitempty"`
	Totals  *Totals       `json:"totals,omitempty"`

	Attempt int    `json:"attempt,omitempty"`
	Status  int    `json:"status,omitempty"`
	Error   string `json:"error,omitempty"`

	CallID  string          `json:"call_id,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Output  string          `json:"output,omitempty"`
	IsError bool            `json:"is_error,omitempty"`

	Session string `json:"session,omitempty"`

	Compaction *Compaction `json:"compaction,omitempty"`

	Watcher string `json:"watcher,omitempty"`
	Action  Action `json:"action,omitempty"`
	Limit   string `json:"limit,omitempty"`

	RunStatus Status `json:"run_status,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Summary   string `json:"summary,omitempty"`

	QuestionID string   `json:"question_id,omitempty"`
	Options    []string `json:"options,omitempty"`
	Via        string   `json:"via,omitempty"`
	Inbox      int      `json:"inbox,omitempty"` // the inbox message's number (InboxEntry.Seq)

	Turn int `json:"turn,omitempty"` // a pilot run's person turn (its checkpoint)
}

// Totals are a run's running totals: the model, its workers, and the
// workers by state.
type Totals struct {
	Usage          record.Usage `json:"usage"`
	CostUSD        *float64     `json:"cost_usd"`
	WorkerUsage    record.Usage `json:"worker_usage"`
	WorkerCostUSD  *float64     `json:"worker_cost_usd"`
	WorkersRunning int          `json:"workers_running"`
	WorkersDone    int          `json:"workers_done"`
	WorkersFailed  int          `json:"workers_failed"`
}

// Compaction says what a compaction dropped.
type Compaction struct {
	BeforeTokens int64    `json:"before_tokens"`
	AfterTokens  int64    `json:"after_tokens"`
	DroppedItems int      `json:"dropped_items"`
	DroppedCalls int      `json:"dropped_calls"`
	Tools        []string `json:"tools,omitempty"`   // the dropped calls' tools, with counts
	Workers      []string `json:"workers,omitempty"` // workers whose calls or results were dropped
	ClippedItems int      `json:"clipped_items,omitempty"`
}

// Action is what a guard asks of the run before a step.
type Action string

const (
	// ActionContinue lets the step run.
	ActionContinue Action = "continue"
	// ActionNudge adds the verdict's message to the conversation, as
	// "[watcher:NAME] MESSAGE", before the step's model call.
	ActionNudge Action = "nudge"
	// ActionPause ends the run as interrupted: --resume continues it.
	ActionPause Action = "pause"
	// ActionAbort ends the run as failed.
	ActionAbort Action = "abort"
)
