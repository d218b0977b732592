package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/orchestrator/shell"
)

// Shell returns exec_command and write_stdin on sh. Working dirs given to
// exec_command are confined by dirs.
func Shell(sh *shell.Manager, dirs Dirs) []Tool {
	return []Tool{execTool(sh, dirs), writeTool(sh)}
}

func execTool(sh *shell.Manager, dirs Dirs) Tool {
	schema := object(map[string]prop{
		"cmd":               str("The shell command to run."),
		"workdir":           str("Directory to run it in, absolute or relative to the run's dir (default the run's dir)."),
		"yield_time_ms":     integer(fmt.Sprintf("How long to wait for output before returning, in ms (default %d, at most %d). A command still running keeps a session id for write_stdin.", shell.DefaultExecYieldMs, shell.MaxYieldMs)),
		"max_output_tokens": integer(fmt.Sprintf("Bound of the output returned, in tokens of ~4 bytes (default %d); the middle is cut.", shell.DefaultMaxOutputTokens)),
		"shell":             str("The shell (default $SHELL, else /bin/bash)."),
		"login":             boolean("Run as a login shell, -lc (default true), rather than -c."),
		"tty":               boolean("Run under a pseudo-terminal (default true); false uses pipes."),
	}, "cmd")
	return Tool{
		Name: "exec_command",
		Description: "Run a shell command under a pseudo-terminal to verify work: run tests, build, inspect files and git state. " +
			"Returns the exit code and output, or a session id if it is still running after yield_time_ms. " +
			"Delegate implementation to workers; use this to check it.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var req shell.ExecRequest
			if err := decode("exec_command", args, &req, schema); err != nil {
				return Errorf("%v", err)
			}
			if strings.TrimSpace(req.Cmd) == "" {
				return Errorf("cmd is empty: pass the shell command to run")
			}
			if req.Workdir != "" {
				dir, err := dirs.Resolve(req.Workdir)
				if err != nil {
					return Errorf("refused: %v", err)
				}
				req.Workdir = dir
			}
			r, err := sh.Exec(ctx, req)
			if err != nil {
				return Errorf("%v", err)
			}
			return Result{Text: r.String()}
		},
	}
}

func writeTool(sh *shell.Manager) Tool {
	schema := object(map[string]prop{
		"session_id":        integer("The session id exec_command reported for a command still running."),
		"chars":             str(`Characters to write to its input; may be empty to only read new output. Control characters work: "\u0003" is Ctrl-C, "\u0004" Ctrl-D.`),
		"yield_time_ms":     integer(fmt.Sprintf("How long to wait for output, in ms (default %d, at most %d).", shell.DefaultWriteYieldMs, shell.MaxYieldMs)),
		"max_output_tokens": integer(fmt.Sprintf("Bound of the output returned, in tokens (default %d).", shell.DefaultMaxOutputTokens)),
	}, "session_id", "chars")
	return Tool{
		Name:        "write_stdin",
		Description: "Write to a command that exec_command left running and return its output since the last call, or just poll it with empty chars.",
		Schema:      schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var req struct {
				shell.WriteRequest
				SessionID *int    `json:"session_id"`
				Chars     *string `json:"chars"`
			}
			if err := decode("write_stdin", args, &req, schema); err != nil {
				return Errorf("%v", err)
			}
			if req.SessionID == nil || req.Chars == nil {
				return Errorf("write_stdin needs session_id (from exec_command's \"Process running with session ID N\") and chars (\"\" to only poll)")
			}
			req.WriteRequest.SessionID, req.WriteRequest.Chars = *req.SessionID, *req.Chars
			r, err := sh.WriteStdin(ctx, req.WriteRequest)
			if err != nil {
				return Errorf("%v", err)
			}
			return Result{Text: r.String()}
		},
	}
}
