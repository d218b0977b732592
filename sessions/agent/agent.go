package agent

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
)

// Adapter is one agent CLI: how to start and resume it, and how to read what
// it prints. Implementations live under adapters/.
type Adapter interface {
	// Name is the adapter's name in records and on the command line.
	Name() string
	// DefaultModel is used when neither the user nor config.toml names one;
	// the adapter may read its own settings file in the state dir.
	DefaultModel(stateDir string) string
	// Command returns the process to run for one turn. It fails with a
	// message a user can act on when the agent's binary cannot be found or
	// the request is invalid (an unknown sandbox mode, say).
	Command(req TurnRequest) (Command, error)
	// NewParser returns a parser for one turn file.
	NewParser() Parser
	// Interactive returns the agent's own interactive CLI, resuming the
	// thread req.ThreadID in req.WorkingDir with req's model and sandbox,
	// for a person to work in (zwarm attach); req.Prompt is unused. It is
	// run in the foreground on the person's terminal, with the environment
	// of the attaching command plus Env; Stdin and Input are not used. An
	// agent without one fails with a message saying so.
	Interactive(req TurnRequest) (Command, error)
}

// TurnRequest is what an adapter needs to build one turn's command.
type TurnRequest struct {
	StateDir   string
	SessionID  string
	Prompt     string
	Model      string
	WorkingDir string
	Sandbox    string
	// ReasoningEffort ("" for the agent's default) and Instructions (""
	// for none) are the session's, given on every turn: an adapter
	// refuses an effort its agent does not know (Invalidf).
	ReasoningEffort string
	Instructions    string
	// ThreadID, when set, continues that thread with the agent's native resume.
	ThreadID string
	Config   config.AdapterConfig
	// Worktree says the agent works in a git worktree of its own, where
	// running commands touches nobody else's files: an agent whose default
	// permissions would refuse them there lets them run.
	Worktree bool
	// GitDirs are the parts of the repository's git dir that the agent's
	// own git writes to commit in its worktree; an agent that sandboxes
	// its commands lets them be written.
	GitDirs []string
	// UsageEndpoint, when set, is a local OTLP/HTTP logs endpoint (JSON)
	// that a UsageReporter's agent sends its telemetry to, so that each
	// model call's usage is known as the turn goes (a cost limit's).
	UsageEndpoint string
	// Telemetry, when its TracesURL is set, is the collector zwarm sends
	// its traces to: the agent's own telemetry goes there too, so one
	// backend holds both (the supervisor puts the turn's span in the
	// agent's TRACEPARENT, for an agent that nests its spans under it).
	Telemetry Telemetry
}

// Telemetry is where an agent sends its own OpenTelemetry data.
type Telemetry struct {
	// TracesURL and LogsURL are OTLP/HTTP URLs (LogsURL may be "").
	TracesURL, LogsURL string
	// Headers go with every export (an API key); never logged.
	Headers map[string]string
	// Content lets the agent export prompts and output.
	Content bool
	// ExportTimeout bounds each export of the agent's: an agent sends what
	// it holds as it exits, and a collector that takes the connection and
	// never answers would otherwise hold the turn's end for the exporter's
	// own default (10 s, for each of its exporters).
	ExportTimeout time.Duration
}

// On says the agent's telemetry goes somewhere.
func (t Telemetry) On() bool { return t.TracesURL != "" }

// TimeoutEnv is ExportTimeout as the OpenTelemetry SDKs read it
// (OTEL_EXPORTER_OTLP_TIMEOUT, in milliseconds), for an agent whose
// telemetry is on: none when the person set it themselves.
func (t Telemetry) TimeoutEnv() []string {
	if !t.On() || t.ExportTimeout <= 0 || os.Getenv("OTEL_EXPORTER_OTLP_TIMEOUT") != "" {
		return nil
	}
	return []string{"OTEL_EXPORTER_OTLP_TIMEOUT=" + strconv.FormatInt(t.ExportTimeout.Milliseconds(), 10)}
}

// UsageReporter is an adapter whose agent reports each model call's usage
// as OpenTelemetry logs while its turn runs, where its output says it
// only at the turn's end (codex: exec --json prints usage only with
// turn.completed). The supervisor serves the endpoint (UsageEndpoint)
// for a session with a cost limit and turns what it gets into usage
// events.
type UsageReporter interface {
	// CallUsage reads one OTLP/HTTP logs request body (JSON): the usage
	// of each model call it reports.
	CallUsage(body []byte) []record.Usage
}

// Command is a process to start. The supervisor runs it with stdout and
// stderr to the turn's files, the environment of the command that spawned
// the session plus Env, and stdin as Stdin and Input say.
type Command struct {
	Path string
	Args []string
	Dir  string
	Env  []string
	// Stdin, if set, is written to the agent's stdin, which is then closed:
	// prompts of any length reach agents that read them from stdin (the
	// argument list has a limit; stdin has none). Without Stdin or Input,
	// stdin is /dev/null.
	Stdin []byte
	// Input, if set, makes this a live process: its stdin is a pipe the
	// supervisor holds. It writes Input(prompt) for the turn's prompt, and
	// after each turn's end the next queued follow-up, so one process serves
	// several turns. With nothing queued it closes stdin and the agent exits.
	Input func(prompt string) []byte
	// StopSignal is the signal that stops the agent at once, sent to its
	// process group when it is killed or interrupted (0: SIGTERM). Claude
	// Code takes SIGTERM as the end of the command it runs, tells its
	// model, and runs what the model asks next; SIGINT stops it.
	StopSignal syscall.Signal
}

// RequestChecker is an Adapter that can tell a request it would refuse
// without looking at the machine (the agent's binary, its settings): a
// follow-up for a running session, whose own supervisor builds the
// command later in an environment of its own, is checked so before it is
// queued. Command makes the same checks.
type RequestChecker interface {
	CheckRequest(req TurnRequest) error
}

// CostReporter is an Adapter whose agent reports the cost of each turn
// itself (claude): a session's cost limit holds whatever the price table
// says of its model.
type CostReporter interface {
	ReportsCost() bool
}

// Adapters is the set of adapters a Manager can use.
type Adapters interface {
	Lookup(name string) (Adapter, error)
	Names() []string
}

// AttachAccountant is an adapter that can tell, from its agent's own
// session log, what a person's model calls in its interactive CLI used
// (zwarm attach), which zwarm does not see go by.
type AttachAccountant interface {
	// AttachUsage reads the usage of thread's calls from start to end:
	// the span's own (cumulative false), or the thread's running total
	// at its end (cumulative true). ok is false when the log says nothing.
	AttachUsage(threadID string, start, end time.Time) (u record.Usage, cumulative, ok bool)
}

// ThreadFinder is an adapter that can tell, from its agent's own session
// logs, which threads were written in dir since a time other than not:
// the new conversation a person started in its interactive CLI (claude's
// /clear, codex's /new) and left it in.
type ThreadFinder interface {
	// ThreadsSince lists them, the last written last.
	ThreadsSince(dir string, since time.Time, not string) []string
}

// Reacher is an adapter whose sandbox lets its agent write more than its
// working dir and its git dirs (codex's workspace-write: /tmp and
// $TMPDIR, unless codex.toml excludes them, and its writable_roots): a
// repository or a state dir beneath one is within a worker's reach.
type Reacher interface {
	// Reaches lists them for req's settings, each with how to take it
	// out of reach.
	Reaches(req TurnRequest) []Reach
}

// Reach is a dir an agent's sandbox lets it write, and how to stop it.
type Reach struct{ Dir, Remedy string }

// Parser turns one raw output line of an agent (without its newline) into
// normalized events. A parser must accept anything: blank lines, lines that
// are not JSON, unknown event types, invalid UTF-8. It never fails; what it
// cannot understand becomes EventRaw or EventUnknown. The line's bytes are
// its only during the call: callers reuse the buffer (the supervisor
// recycles the buffers of an agent's output), so nothing a parser returns
// or keeps may point into them. The slice it returns may be reused by the
// next call: callers copy the events out.
type Parser interface {
	ParseLine(line []byte) []record.Event
}
