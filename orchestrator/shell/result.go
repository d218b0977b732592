package shell

import (
	"fmt"
	"strings"
	"time"
)

// Defaults and limits of the contract, in milliseconds and tokens.
const (
	DefaultExecYieldMs     = 10000
	DefaultWriteYieldMs    = 250
	DefaultMaxOutputTokens = 10000
	MinYieldMs             = 1
	MaxYieldMs             = 60000
)

// ExecRequest holds exec_command's parameters; nil means the default. The
// JSON tags are the tool's parameter names, so tool arguments decode into it.
type ExecRequest struct {
	Cmd             string `json:"cmd"`
	Workdir         string `json:"workdir,omitempty"` // relative to Options.Dir
	YieldTimeMs     *int   `json:"yield_time_ms,omitempty"`
	MaxOutputTokens *int   `json:"max_output_tokens,omitempty"`
	Shell           string `json:"shell,omitempty"`
	Login           *bool  `json:"login,omitempty"`
	TTY             *bool  `json:"tty,omitempty"`
}

// WriteRequest holds write_stdin's parameters; nil means the default.
type WriteRequest struct {
	SessionID       int    `json:"session_id"`
	Chars           string `json:"chars"` // may be empty: then the call only polls
	YieldTimeMs     *int   `json:"yield_time_ms,omitempty"`
	MaxOutputTokens *int   `json:"max_output_tokens,omitempty"`
}

// Result is what one exec_command or write_stdin call observed.
type Result struct {
	Wall           time.Duration
	ExitCode       *int   // set once the process exited; 128+N when killed by signal N
	SessionID      int    // the running process's id; 0 once it exited
	OriginalTokens int    // token estimate of the whole output; 0 unless truncated
	Output         string // the output since the previous call, bounded
	Warning        string // a line for the model, such as the clamp warning
}

// String renders the result as the contract's text.
func (r Result) String() string {
	var b strings.Builder
	if r.Warning != "" {
		b.WriteString(r.Warning)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Wall time: %.3f seconds\n", r.Wall.Seconds())
	if r.ExitCode != nil {
		fmt.Fprintf(&b, "Process exited with code %d\n", *r.ExitCode)
	} else {
		fmt.Fprintf(&b, "Process running with session ID %d\n", r.SessionID)
	}
	if r.OriginalTokens > 0 {
		fmt.Fprintf(&b, "Original token count: %d\n", r.OriginalTokens)
	}
	b.WriteString("Output:\n")
	b.WriteString(r.Output)
	return b.String()
}

// clampYield applies the default and the [MinYieldMs, MaxYieldMs] clamp. A
// request above the maximum yields the warning line the model is shown.
func clampYield(ms *int, def int) (time.Duration, string) {
	v := def
	if ms != nil {
		v = *ms
	}
	var warn string
	if v > MaxYieldMs {
		warn = fmt.Sprintf("Warning: requested timeout %dms exceeds maximum of %dms; clamping to %dms.", v, MaxYieldMs, MaxYieldMs)
		v = MaxYieldMs
	}
	v = max(v, MinYieldMs)
	return time.Duration(v) * time.Millisecond, warn
}

// outputBudget is the byte budget for max_output_tokens.
func outputBudget(tokens *int) (int, error) {
	if tokens == nil {
		return budgetBytes(DefaultMaxOutputTokens), nil
	}
	if *tokens < 0 {
		return 0, fmt.Errorf("max_output_tokens is %d: pass a number of tokens, 0 or more (0: the count of the output alone), or omit it for %d", *tokens, DefaultMaxOutputTokens)
	}
	return budgetBytes(*tokens), nil
}
