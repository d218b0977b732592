package fakeagent

import (
	"encoding/json"
	"fmt"
)

// The script as a test writes it. Step is a map so that a test names only
// the fields it sets, as the format above spells them.

// Script is the file named by FAKEAGENT_SCRIPT.
type Script struct {
	Before   []Step            `json:"before,omitempty"`
	Default  []Step            `json:"default"`
	ByPrompt map[string][]Step `json:"by_prompt,omitempty"`
	Live     bool              `json:"live,omitempty"`
}

// Step is one step of a script: {"out": LINE}, {"sleep_ms": N}, ...
type Step = map[string]any

// Out prints a line.
func Out(line string) Step { return Step{"out": line} }

// WaitFile blocks the agent until path exists.
func WaitFile(path string) Step { return Step{"wait_file": path} }

// Run runs a shell command in the agent's working dir to its end: the work
// an agent does (its edits, in a worktree).
func Run(shell string) Step { return Step{"run": shell} }

// Completes is a codex turn that starts a thread, says msg and reports
// usage: cumulativeInput is codex's running total for the thread.
func Completes(msg string, cumulativeInput int) []Step {
	m, _ := json.Marshal(msg)
	return []Step{
		Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		Out(`{"type":"turn.started"}`),
		Out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":` + string(m) + `}}`),
		Out(fmt.Sprintf(`{"type":"turn.completed","usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`, cumulativeInput)),
	}
}

// ChangesFile is a codex step reporting that the agent added path.
func ChangesFile(path string) Step {
	p, _ := json.Marshal(path)
	return Out(`{"type":"item.completed","item":{"id":"item_9","type":"file_change","changes":[{"path":` + string(p) + `,"kind":"add"}],"status":"completed"}}`)
}
