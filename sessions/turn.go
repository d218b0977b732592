package sessions

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// runTurn runs one agent process for turn t. A live process (Command.Input)
// may go on to serve the follow-ups queued meanwhile as further turns. It
// returns when the process and everything it started are gone and the last
// turn it served is recorded.
func (sv *supervisor) runTurn(ctx context.Context, s *Session, t *Turn) error {
	cfg, err := LoadConfig(sv.st.Dir())
	if err != nil {
		return sv.endTurn(t.N, nil, false, err.Error())
	}
	sv.prices = cfg.PriceTable()
	ad, err := sv.adapters.Lookup(s.Adapter)
	if err != nil {
		return sv.endTurn(t.N, nil, false, err.Error())
	}
	req := TurnRequest{
		StateDir: sv.st.Dir(), SessionID: s.ID, Prompt: t.Prompt, Model: s.Model,
		WorkingDir: s.WorkingDir, Sandbox: s.Sandbox, Config: cfg.Adapter(s.Adapter),
	}
	if t.N > 1 && s.ThreadID != "" {
		req.ThreadID = s.ThreadID
	}
	cmd, err := ad.Command(req)
	if err != nil {
		return sv.endTurn(t.N, nil, false, err.Error())
	}
	if req.ThreadID != "" {
		sv.st.update(s.ID, func(s *Session) error {
			s.current().Resumed = true
			return nil
		})
	}
	p, err := sv.startAgent(s.ID, t.N, cmd)
	if err != nil {
		return sv.endTurn(t.N, nil, false, fmt.Sprintf("start %s: %v", s.Adapter, err))
	}
	sv.log.Info("turn started", "turn", t.N, "pid", p.ref.PID, "cmd", cmd.Path, "resume", req.ThreadID != "", "live", cmd.Input != nil)
	last, code, killed := sv.drive(ctx, s.ID, t.N, ad, p, cmd, cfg.Grace())
	return sv.endTurn(last, &code, killed, "")
}

// endTurn records how turn n ended. code is nil when no agent ran.
func (sv *supervisor) endTurn(n int, code *int, killed bool, startErr string) error {
	stderrTail := ""
	if code != nil && *code != 0 && !killed {
		stderrTail = lastLines(sv.st.StderrPath(sv.id, n), 3)
	}
	_, err := sv.st.update(sv.id, func(s *Session) error {
		now := time.Now().UTC()
		cur := s.current()
		cur.EndedAt, cur.ExitCode = &now, code
		switch {
		case killed:
			cur.Status, cur.Error = StatusKilled, "killed by zwarm kill"
		case startErr != "":
			cur.Status, cur.Error = StatusFailed, startErr
		case cur.AgentFailed || *code != 0:
			cur.Status = StatusFailed
			if cur.Error == "" {
				cur.Error = firstNonEmpty(cur.AgentError, stderrTail, fmt.Sprintf("%s exited with code %d", s.Adapter, *code))
			}
		default:
			cur.Status = StatusCompleted
		}
		s.ExitCode, s.Agent, s.EndedAt = code, nil, &now
		s.Status, s.Error = cur.Status, cur.Error
		s.refresh(sv.prices)
		if killed {
			s.Owner = nil
			return sv.st.dropQueued(s, "the session was killed before it was delivered")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record turn %d: %w", n, err)
	}
	sv.log.Info("turn ended", "turn", n, "exit", code, "killed", killed, "err", startErr)
	if killed {
		return errKilled
	}
	return nil
}

// errKilled ends the supervisor's loop after a kill was recorded.
var errKilled = fmt.Errorf("killed")

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// lastLines returns the last n non-empty lines of a small tail of a file.
func lastLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4096
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-tail)
	buf := make([]byte, st.Size()-off)
	n2, _ := f.ReadAt(buf, off)
	var out []string
	for _, l := range strings.Split(strings.ToValidUTF8(string(buf[:n2]), "\uFFFD"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}
