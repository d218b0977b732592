// Package claude runs Claude Code (`claude -p --output-format stream-json`)
// as a zwarm worker: its command lines, its claude.toml settings, and the
// parser of its stream-json events.
//
// Workers start with `--input-format stream-json`: the prompt and every
// follow-up delivered while the process runs are written to its stdin as
// user messages, each processed as the next turn of the same process. A
// follow-up to a finished session resumes it with `--resume SESSION_ID`.
package claude

import (
	"encoding/json"
	"net/url"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
)

// Name is the adapter's name.
const Name = "claude"

// BinaryEnv overrides the claude binary.
const BinaryEnv = "ZWARM_CLAUDE_BIN"

// DangerFullAccess is the sandbox name that skips every permission check.
const DangerFullAccess = "danger-full-access"

// permissionModes are the values of claude's --permission-mode.
var permissionModes = map[string]bool{"default": true, "acceptEdits": true, "plan": true, "bypassPermissions": true, "dontAsk": true}

// Efforts are the values of claude's --effort.
var Efforts = []string{"low", "medium", "high", "xhigh", "max"}

// Adapter is the claude adapter.
type Adapter struct{}

// New returns the claude adapter.
func New() *Adapter { return &Adapter{} }

// Name implements agent.Adapter.
func (*Adapter) Name() string { return Name }

// DefaultModel implements agent.Adapter: claude.toml's model, else sonnet.
func (*Adapter) DefaultModel(stateDir string) string {
	if s, err := LoadSettings(stateDir); err == nil && s.Model != "" {
		return s.Model
	}
	return "sonnet"
}

// ReportsCost implements agent.CostReporter: claude reports each
// turn's cost itself.
func (*Adapter) ReportsCost() bool { return true }

// NewParser implements agent.Adapter.
func (*Adapter) NewParser() agent.Parser { return NewParser() }

// Command implements agent.Adapter:
//
//	claude -p --output-format stream-json --verbose --input-format stream-json
//	       [--resume SESSION_ID] [--model M] [--effort E] [--append-system-prompt=TEXT]
//	       PERMISSIONS [ARGS...]                                         (run in DIR)
//
// With live_input = false in claude.toml the prompt is written to stdin,
// which is then closed: `claude -p` reads its prompt there when it has no
// argument, and stdin has no size limit.
func (a *Adapter) Command(req agent.TurnRequest) (agent.Command, error) {
	if err := agent.CheckModel(req.Model); err != nil {
		return agent.Command{}, err
	}
	bin, set, perm, err := setup(req)
	if err != nil {
		return agent.Command{}, err
	}
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	live := set.LiveInput == nil || *set.LiveInput
	if live {
		args = append(args, "--input-format", "stream-json")
	}
	if req.ThreadID != "" {
		args = append(args, "--resume", req.ThreadID)
	}
	args = append(args, sessionArgs(req)...)
	args = append(args, perm...)
	args = append(args, set.Args...)
	cmd := agent.Command{Path: bin, Dir: req.WorkingDir, Env: telemetryEnv(req.Telemetry), StopSignal: syscall.SIGINT}
	if live {
		cmd.Input = UserMessage
	} else {
		cmd.Stdin = []byte(req.Prompt)
	}
	cmd.Args = args
	return cmd, nil
}

// telemetryEnv turns on Claude Code's OpenTelemetry export, to zwarm's
// collector: its metrics and its events (logs), which carry each call's
// usage and each tool's result.
func telemetryEnv(t agent.Telemetry) []string {
	if !t.On() || t.LogsURL == "" {
		return nil
	}
	base := strings.TrimSuffix(t.LogsURL, "/v1/logs")
	env := []string{"CLAUDE_CODE_ENABLE_TELEMETRY=1", "OTEL_METRICS_EXPORTER=otlp", "OTEL_LOGS_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=" + base}
	if len(t.Headers) > 0 {
		keys := make([]string, 0, len(t.Headers))
		for k := range t.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + "=" + url.PathEscape(t.Headers[k])
		}
		env = append(env, "OTEL_EXPORTER_OTLP_HEADERS="+strings.Join(keys, ","))
	}
	if t.Content {
		env = append(env, "OTEL_LOG_USER_PROMPTS=1")
	}
	return append(env, t.TimeoutEnv()...)
}

// setup checks a request and finds what every command line of it needs:
// the binary, claude.toml's settings and the permission flags. What was
// asked is checked before the machine: a bad request is refused as such
// wherever it is made.
func setup(req agent.TurnRequest) (bin string, set Settings, perm []string, err error) {
	if e := req.ReasoningEffort; e != "" && !slices.Contains(Efforts, e) {
		return "", set, nil, config.Invalidf("unknown claude effort %q (want %s)", e, strings.Join(Efforts, ", "))
	}
	if set, err = LoadSettings(req.StateDir); err != nil {
		return "", set, nil, err
	}
	if perm, err = permissionArgs(req.Sandbox, set, req.Worktree); err != nil {
		return "", set, nil, err
	}
	bin, err = binary(req.Config.Binary)
	return bin, set, perm, err
}

// sessionArgs are what the session asked for, given on every turn (a
// resumed session keeps none of them): its model, effort and instructions.
func sessionArgs(req agent.TurnRequest) []string {
	var args []string
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	if e := req.ReasoningEffort; e != "" {
		args = append(args, "--effort", e)
	}
	if req.Instructions != "" {
		// One argument, so that text beginning with a dash is not
		// taken for an option.
		args = append(args, "--append-system-prompt="+req.Instructions)
	}
	return args
}

// Interactive implements agent.Adapter: Claude Code's own interactive
// session, resuming the worker's, with the model and permissions of its
// turns and claude.toml's args, for a person to work in (zwarm attach):
//
//	claude --resume SESSION_ID [--model M] [--effort E] [--append-system-prompt=TEXT]
//	       PERMISSIONS [ARGS...]                                         (run in DIR)
//
// It keeps the session's id (no --fork-session), so later follow-ups
// resume the thread with what the person did in it. Claude keeps its
// sessions per directory: it runs in the worker's.
func (a *Adapter) Interactive(req agent.TurnRequest) (agent.Command, error) {
	if req.ThreadID == "" {
		return agent.Command{}, config.Invalidf("claude --resume needs the session's id, and its agent never reported one")
	}
	bin, set, perm, err := setup(req)
	if err != nil {
		return agent.Command{}, err
	}
	args := append([]string{"--resume", req.ThreadID}, sessionArgs(req)...)
	args = append(append(args, perm...), set.Args...)
	return agent.Command{Path: bin, Args: args, Dir: req.WorkingDir}, nil
}

// UserMessage is one stream-json input line carrying a user message.
func UserMessage(text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type":    "user",
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}},
	})
	return append(b, '\n')
}

// The sandbox levels zwarm names for every agent (codex's own), mapped
// onto claude's permission modes and tools, so that a role or a spawn
// says one thing and means it with either agent.
const (
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
)

// readOnlyDenied are claude's tools that change files: a read-only worker
// is refused them whatever the user's own settings allow.
const readOnlyDenied = "Edit,MultiEdit,Write,NotebookEdit"

// permissionArgs maps --sandbox / claude.toml to claude's flags. The
// default is acceptEdits: the agent may edit files in its working dir. In
// a worktree of its own, the default also lets it run commands (Bash), as
// codex's workspace-write does: in acceptEdits, claude -p refuses every
// command that is not a plain file edit, and the worker could not even
// run the tests. The three sandbox levels map as codex means them:
// read-only reads and searches but edits nothing and runs no command
// (dontAsk: what is not allowed is refused, never asked, with the file
// tools denied outright); workspace-write is the default; danger-full-
// access skips every check. A claude permission mode the user chose is
// left as it is.
func permissionArgs(sandbox string, set Settings, worktree bool) ([]string, error) {
	mode := sandbox
	if mode == "" && set.FullDanger {
		mode = DangerFullAccess
	}
	if mode == "" {
		mode = set.PermissionMode
	}
	switch mode {
	case "", SandboxWorkspaceWrite:
		if worktree {
			return []string{"--permission-mode", "acceptEdits", "--allowedTools", "Bash"}, nil
		}
		return []string{"--permission-mode", "acceptEdits"}, nil
	case SandboxReadOnly:
		return []string{"--permission-mode", "dontAsk", "--disallowedTools", readOnlyDenied}, nil
	case DangerFullAccess:
		// As root, claude also wants IS_SANDBOX=1 in the environment.
		return []string{"--dangerously-skip-permissions"}, nil
	}
	if !permissionModes[mode] {
		return nil, config.Invalidf("unknown claude sandbox or permission mode %q (want read-only, workspace-write, danger-full-access, "+
			"or one of claude's permission modes: acceptEdits, bypassPermissions, default, dontAsk, plan)", mode)
	}
	return []string{"--permission-mode", mode}, nil
}

// binary finds the claude executable: ZWARM_CLAUDE_BIN, then config.toml's
// [adapters.claude] binary, then `claude` on PATH.
func binary(configured string) (string, error) {
	return agent.FindBinary(Name, BinaryEnv, configured, "npm install -g @anthropic-ai/claude-code")
}
