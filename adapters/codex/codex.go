// Package codex runs the OpenAI Codex CLI (`codex exec --json`) as a zwarm
// worker: its command lines for a first turn and a native resume, its
// codex.toml overrides, and the parser of its JSONL events.
package codex

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
)

// Name is the adapter's name.
const Name = "codex"

// BinaryEnv overrides the codex binary.
const BinaryEnv = "ZWARM_CODEX_BIN"

// Sandbox modes codex knows. DangerFullAccess is run with the bypass flag.
const (
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
	DangerFullAccess      = "danger-full-access"
)

// Efforts are the values of codex's model_reasoning_effort.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// Adapter is the codex adapter.
type Adapter struct{}

// New returns the codex adapter.
func New() *Adapter { return &Adapter{} }

// Name implements agent.Adapter.
func (*Adapter) Name() string { return Name }

// DefaultModel implements agent.Adapter: codex.toml's model, else
// gpt-5.1-codex-mini.
func (*Adapter) DefaultModel(stateDir string) string {
	if o, err := LoadOverrides(stateDir); err == nil && o.Model != "" {
		return o.Model
	}
	return "gpt-5.1-codex-mini"
}

// NewParser implements agent.Adapter.
func (*Adapter) NewParser() agent.Parser { return NewParser() }

// Command implements agent.Adapter:
//
//	codex [-c k=v ...] [-c model_reasoning_effort=E] [-c developer_instructions=TEXT]
//	      exec --json --skip-git-repo-check --disable unbounded_connection_retries
//	      SANDBOX -m MODEL -C DIR -- -                 < PROMPT
//	codex [-c ...] exec resume --json --skip-git-repo-check --disable unbounded_connection_retries
//	      SANDBOX -m MODEL -- THREAD_ID -             < PROMPT   (run in DIR)
//
// The prompt goes through stdin (`-`), so a task of any size codex takes
// works: as an argument it would meet the system's limit on argument lists. Without
// `--disable unbounded_connection_retries` codex waits for an unreachable
// model forever; with it, the turn fails and says why.
// MaxPromptChars is the longest prompt codex takes: a longer one fails
// its turn at once ("Input exceeds the maximum length of 1048576
// characters"), so it is refused before a session is made for it.
const MaxPromptChars = 1 << 20

func (a *Adapter) Command(req agent.TurnRequest) (agent.Command, error) {
	// What was asked is checked before the machine: a bad request is
	// refused as such wherever it is made.
	if err := a.CheckRequest(req); err != nil {
		return agent.Command{}, err
	}
	bin, ov, sandbox, err := a.setup(req)
	if err != nil {
		return agent.Command{}, err
	}
	args := sessionArgs(ov, req)
	args = append(args, otelArgs(req)...)
	resume := req.ThreadID != ""
	args = append(args, "exec")
	if resume {
		args = append(args, "resume")
	}
	args = append(args, "--json", "--skip-git-repo-check", "--disable", "unbounded_connection_retries")
	// resume has no -s; the config key does the same.
	args = append(args, sandboxArgs(sandbox, ov, req, !resume)...)
	if req.Model != "" {
		args = append(args, "-m", req.Model)
	}
	if resume {
		args = append(args, "--", req.ThreadID, "-")
	} else {
		args = append(args, "-C", req.WorkingDir, "--", "-")
	}
	return agent.Command{Path: bin, Args: args, Dir: req.WorkingDir, Stdin: []byte(req.Prompt), Env: req.Telemetry.TimeoutEnv()}, nil
}

// otelArgs point codex's OpenTelemetry export: its logs (each model call's
// usage) at the supervisor's usage endpoint when a cost limit wants them,
// else with its traces at zwarm's collector.
func otelArgs(req agent.TurnRequest) []string {
	var args []string
	tel := req.Telemetry
	if tel.On() {
		args = append(args, "-c", "otel.trace_exporter={otlp-http={endpoint="+tomlString(tel.TracesURL)+`,protocol="binary"`+tomlHeaders(tel.Headers)+"}}")
		args = append(args, "-c", fmt.Sprintf("otel.log_user_prompt=%t", tel.Content))
	}
	switch {
	case req.UsageEndpoint != "":
		args = append(args, "-c", "otel.exporter={otlp-http={endpoint="+tomlString(req.UsageEndpoint)+`,protocol="json"}}`)
	case tel.On() && tel.LogsURL != "":
		args = append(args, "-c", "otel.exporter={otlp-http={endpoint="+tomlString(tel.LogsURL)+`,protocol="binary"`+tomlHeaders(tel.Headers)+"}}")
	}
	return args
}

// tomlHeaders is ",headers={...}" for an inline table, "" for none.
func tomlHeaders(h map[string]string) string {
	if len(h) == 0 {
		return ""
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = tomlString(k) + "=" + tomlString(h[k])
	}
	return ",headers={" + strings.Join(parts, ",") + "}"
}

// tomlString writes a string as a TOML basic string (a JSON string is one).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Interactive implements agent.Adapter: codex's own TUI in the thread,
// with the sandbox and model of the session's turns and codex.toml's
// overrides, for a person to work in (zwarm attach):
//
//	codex [-c k=v ...] resume SANDBOX -m MODEL -C DIR -- THREAD_ID   (run in DIR)
//
// Approvals are the TUI's own: a person is there to answer them.
func (a *Adapter) Interactive(req agent.TurnRequest) (agent.Command, error) {
	if req.ThreadID == "" {
		return agent.Command{}, config.Invalidf("codex resume needs the session's thread id, and its agent never reported one")
	}
	if err := a.CheckRequest(req); err != nil {
		return agent.Command{}, err
	}
	bin, ov, sandbox, err := a.setup(req)
	if err != nil {
		return agent.Command{}, err
	}
	args := append(sessionArgs(ov, req), "resume")
	args = append(args, sandboxArgs(sandbox, ov, req, true)...)
	if req.Model != "" {
		args = append(args, "-m", req.Model)
	}
	args = append(args, "-C", req.WorkingDir, "--", req.ThreadID)
	return agent.Command{Path: bin, Args: args, Dir: req.WorkingDir}, nil
}

// setup finds the binary, reads codex.toml and settles the sandbox mode of
// a request: the session's, else full_danger's, else workspace-write.
func (a *Adapter) setup(req agent.TurnRequest) (bin string, ov Overrides, sandbox string, err error) {
	if bin, err = binary(req.Config.Binary); err != nil {
		return "", ov, "", err
	}
	if ov, err = LoadOverrides(req.StateDir); err != nil {
		return "", ov, "", err
	}
	sandbox = req.Sandbox
	if sandbox == "" && ov.FullDanger {
		sandbox = DangerFullAccess
	}
	if sandbox == "" {
		sandbox = SandboxWorkspaceWrite
	}
	switch sandbox {
	case DangerFullAccess, SandboxReadOnly, SandboxWorkspaceWrite:
		return bin, ov, sandbox, nil
	}
	return "", ov, "", config.Invalidf("unknown codex sandbox mode %q (want read-only, workspace-write or danger-full-access)", sandbox)
}

// CheckRequest implements agent.RequestChecker: a reasoning effort codex
// does not know, a model name that reads as an option, or a prompt
// longer than codex takes.
func (a *Adapter) CheckRequest(req agent.TurnRequest) error {
	if e := req.ReasoningEffort; e != "" && !slices.Contains(Efforts, e) {
		return config.Invalidf("unknown codex reasoning effort %q (want %s)", e, strings.Join(Efforts, ", "))
	}
	if err := agent.CheckModel(req.Model); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(req.Prompt); n > MaxPromptChars {
		return config.Invalidf("the prompt is %d characters, and codex takes at most %d: put the bulk of it in a file and name the file in the task", n, MaxPromptChars)
	}
	return nil
}

// sessionArgs are codex.toml's overrides, then what the session asked
// for, which wins over them, on every turn (a resumed thread keeps
// neither): its reasoning effort and instructions.
func sessionArgs(ov Overrides, req agent.TurnRequest) []string {
	args := configArgs(ov)
	if e := req.ReasoningEffort; e != "" {
		args = append(args, "-c", "model_reasoning_effort="+tomlString(e))
	}
	if req.Instructions != "" {
		args = append(args, "-c", "developer_instructions="+tomlString(req.Instructions))
	}
	return args
}

// configArgs are codex.toml's overrides, as -c flags before the command.
func configArgs(ov Overrides) []string {
	var args []string
	for _, f := range ov.Flags {
		args = append(args, "-c", f)
	}
	return args
}

// sandboxArgs are the flags of a sandbox mode: -s MODE (withFlag), else
// the config key that does the same (exec resume has no -s).
func sandboxArgs(sandbox string, ov Overrides, req agent.TurnRequest, withFlag bool) []string {
	if sandbox == DangerFullAccess {
		return []string{"--dangerously-bypass-approvals-and-sandbox"}
	}
	var args []string
	if withFlag {
		args = append(args, "-s", sandbox)
	} else {
		args = append(args, "-c", fmt.Sprintf("sandbox_mode=%q", sandbox))
	}
	// In a worktree, the worker's own git writes to the repository's
	// git dir, which codex keeps read-only unless it is named a
	// writable root (it protects the gitdir a worktree's .git file
	// points to by design): name the parts a commit needs.
	if roots := append(append([]string(nil), ov.WritableRoots...), req.GitDirs...); sandbox == SandboxWorkspaceWrite && len(roots) > 0 {
		args = append(args, "-c", writableRootsKey+"="+tomlStrings(roots))
	}
	return args
}

// tomlStrings writes a list of strings as a TOML array (JSON strings are
// valid TOML basic strings).
func tomlStrings(list []string) string {
	b, _ := json.Marshal(list)
	return string(b)
}

// binary finds the codex executable: ZWARM_CODEX_BIN, then config.toml's
// [adapters.codex] binary, then `codex` on PATH.
func binary(configured string) (string, error) {
	return agent.FindBinary(Name, BinaryEnv, configured, "npm install -g @openai/codex")
}
