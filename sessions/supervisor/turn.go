package supervisor

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// runTurn runs one agent process for turn t. A live process (Command.Input)
// may go on to serve the follow-ups queued meanwhile as further turns. It
// returns when the process and everything it started are gone, with how
// the last turn it served ended; the caller records that.
func (sv *supervisor) runTurn(ctx context.Context, s *record.Session, t *record.Turn) (state.TurnEnd, map[int]*telemetry.Clock) {
	fail := func(format string, a ...any) (state.TurnEnd, map[int]*telemetry.Clock) {
		return state.TurnEnd{N: t.N, Reason: fmt.Sprintf(format, a...), Adapter: s.Adapter}, nil
	}
	cfg, err := config.Load(sv.st.Dir(), sv.sections...)
	if err != nil {
		return fail("%v", err)
	}
	sv.turns.UsePrices(cfg.PriceTable())
	ad, err := sv.adapters.Lookup(s.Adapter)
	if err != nil {
		return fail("%v", err)
	}
	req := agent.TurnRequest{
		StateDir: sv.st.Dir(), SessionID: s.ID, Prompt: t.Prompt, Model: s.Model,
		WorkingDir: s.WorkingDir, Sandbox: s.Sandbox, Config: cfg.Adapter(s.Adapter),
		ReasoningEffort: s.ReasoningEffort, Instructions: s.Instructions,
	}
	if t.N > 1 && s.ThreadID != "" {
		req.ThreadID = s.ThreadID
	}
	if ws := s.Workspace; ws != nil && ws.State == record.WorkspaceReady {
		req.Worktree, req.GitDirs = true, ws.Worktree().WritableGitDirs()
	}
	// A cost limit wants each call's usage as it comes: an agent that
	// reports it only as telemetry gets an endpoint for the turn.
	var tel *usageEndpoint
	if rep, ok := ad.(agent.UsageReporter); ok && s.MaxCostUSD > 0 {
		if tel, err = startUsageEndpoint(rep); err != nil {
			sv.log.Warn("no telemetry endpoint for the turn; its usage is known at its end", "err", err)
		} else {
			defer tel.close()
			req.UsageEndpoint = tel.url
		}
	}
	if tr := sv.tracer; tr != nil {
		req.Telemetry = agent.Telemetry{TracesURL: tr.URL, LogsURL: tr.LogsURL(), Headers: tr.Headers, Content: tr.Content(),
			ExportTimeout: telemetry.FlushLimit}
	}
	cmd, err := ad.Command(req)
	if err != nil {
		return fail("%v", err)
	}
	if sv.tracer != nil {
		// The turn's span, for an agent that nests its own spans under it.
		cmd.Env = append(cmd.Env, "TRACEPARENT="+telemetry.TraceParent(telemetry.SessionTrace(s), telemetry.TurnSpanID(s.ID, t.N)))
	}
	p, err := sv.startAgent(s.ID, t.N, cmd)
	if err != nil {
		return fail("start %s: %v", s.Adapter, err)
	}
	sv.log.Info("turn started", "turn", t.N, "pid", p.ref.PID, "cmd", cmd.Path, "resume", req.ThreadID != "", "live", cmd.Input != nil)
	r := newAgentRun(sv, s.ID, t.N, ad.NewParser(), p, cmd, cfg.Grace())
	r.oneTurn = req.Worktree
	r.tel = tel
	end := r.run(ctx)
	end.Adapter = s.Adapter
	if end.ExitCode != nil && *end.ExitCode != 0 && !end.Killed {
		end.StderrTail = lastLines(sv.st.StderrPath(sv.id, end.N), 3)
	}
	return end, r.clocks
}

// lastLines returns the last n non-empty lines of the tail of a file that
// are not a stack trace's: with RUST_BACKTRACE set, codex ends its error
// with dozens of frames ("11: <unknown>"), and a Node CLI's error with its
// "at ..." lines; the error is the line before them.
func lastLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 64 << 10
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-tail)
	buf := make([]byte, st.Size()-off)
	n2, _ := f.ReadAt(buf, off)
	var all, out []string
	for _, l := range strings.Split(strings.ToValidUTF8(string(buf[:n2]), "\uFFFD"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			all = append(all, l)
			if !stackLine(l) {
				out = append(out, l)
			}
		}
	}
	if len(out) == 0 {
		out = all // nothing but a trace: better than nothing
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}

// stackLine reports whether a line (trimmed) is part of a stack trace: a
// Rust backtrace's header, frames ("7: codex_exec::run_main") and
// locations ("at ./src/lib.rs:12:5"), its note on RUST_BACKTRACE, or a
// JavaScript frame ("at Object.<anonymous> (file.js:1:2)").
func stackLine(l string) bool {
	if strings.EqualFold(l, "stack backtrace:") || strings.HasPrefix(l, "at ") || strings.Contains(l, "RUST_BACKTRACE") {
		return true
	}
	digits := len(l) - len(strings.TrimLeft(l, "0123456789"))
	return digits > 0 && strings.HasPrefix(l[digits:], ": ")
}
