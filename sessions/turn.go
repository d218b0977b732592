package sessions

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// runTurn starts the agent for one turn, follows its output while it runs,
// and records how it ended. It returns only when every process the turn
// started is gone.
func (sv *supervisor) runTurn(ctx context.Context, s *Session, t *Turn) error {
	cfg, err := LoadConfig(sv.st.Dir())
	if err != nil {
		return sv.endTurn(t, nil, false, err.Error())
	}
	sv.prices = cfg.PriceTable()
	ad, err := sv.adapters.Lookup(s.Adapter)
	if err != nil {
		return sv.endTurn(t, nil, false, err.Error())
	}
	req := TurnRequest{
		StateDir: sv.st.Dir(), SessionID: s.ID, Prompt: t.Prompt, Model: s.Model,
		WorkingDir: s.WorkingDir, Sandbox: s.Sandbox, Config: cfg.Adapter(s.Adapter),
	}
	if t.N > 1 {
		req.ThreadID = s.ThreadID
	}
	cmd, err := ad.Command(req)
	if err != nil {
		return sv.endTurn(t, nil, false, err.Error())
	}
	proc, err := sv.start(s, t, cmd)
	if err != nil {
		return sv.endTurn(t, nil, false, fmt.Sprintf("start %s: %v", s.Adapter, err))
	}
	sv.log.Info("turn started", "turn", t.N, "pid", proc.PID, "cmd", cmd.Path, "resume", req.ThreadID != "")

	exited := make(chan unix.WaitStatus, 1)
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		reap(proc.PID, exited)
	}()

	ws, killed := sv.follow(ctx, s, t, ad, proc, cfg.Grace(), exited)

	// Whatever the agent left behind (a server it started, a command that
	// escaped with setsid) dies with the turn.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := sweep(sctx, s.ID, os.Getpid()); err != nil {
		sv.log.Error("sweep", "err", err)
	}
	cancel()
	<-reaped

	code := exitCode(ws)
	return sv.endTurn(t, &code, killed, "")
}

// start launches the agent in its own process group.
func (sv *supervisor) start(s *Session, t *Turn, cmd Command) (*ProcRef, error) {
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer stdin.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	out, err := os.OpenFile(sv.st.TurnPath(s.ID, t.N), flags, filePerm)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	errf, err := os.OpenFile(sv.st.StderrPath(s.ID, t.N), flags, filePerm)
	if err != nil {
		return nil, err
	}
	defer errf.Close()

	env := append(os.Environ(), cmd.Env...)
	env = append(env, MarkerEnv+"="+s.ID)
	p, err := os.StartProcess(cmd.Path, append([]string{cmd.Path}, cmd.Args...), &os.ProcAttr{
		Dir:   cmd.Dir,
		Env:   env,
		Files: []*os.File{stdin, out, errf},
		Sys: &syscall.SysProcAttr{
			Setpgid: true,
			// If the supervisor itself is killed, the agent must not run on
			// unsupervised.
			Pdeathsig: syscall.SIGKILL,
		},
	})
	if err != nil {
		return nil, err
	}
	ref, err := refOf(p.Pid)
	if err != nil {
		ref = &ProcRef{PID: p.Pid}
	}
	p.Release()
	if _, err := sv.st.update(s.ID, func(s *Session) error {
		s.Agent, s.PID = ref, ref.PID
		return nil
	}); err != nil {
		sv.log.Error("record agent pid", "err", err)
	}
	return ref, nil
}

// follow parses the turn file as the agent writes it, keeping meta.json
// current, until the agent exits. A cancelled ctx is a kill: SIGTERM to the
// agent's group, the grace period, then SIGKILL.
func (sv *supervisor) follow(ctx context.Context, s *Session, t *Turn, ad Adapter, agent *ProcRef, grace time.Duration, exited <-chan unix.WaitStatus) (unix.WaitStatus, bool) {
	rd := NewTurnReader(sv.st.TurnPath(s.ID, t.N), ad.NewParser(), 0)
	defer rd.Close()
	var changes []Event
	collect := func(ev Event) { changes = append(changes, ev) }

	w, err := watchDirs(sv.st.turnsDir(s.ID))
	var wake <-chan struct{}
	if err != nil {
		sv.log.Warn("no file events; progress is recorded when the turn ends", "err", err)
	} else {
		defer w.Close()
		wake = w.C()
	}
	var flush <-chan time.Time
	var lastFlush time.Time
	save := func() {
		if len(changes) == 0 {
			return
		}
		evs, off := changes, rd.Offset()
		changes = nil
		lastFlush = time.Now()
		if _, err := sv.st.update(s.ID, func(s *Session) error {
			for _, ev := range evs {
				s.fold(ev)
			}
			s.current().Offset = off
			s.refresh(sv.prices)
			return nil
		}); err != nil {
			sv.log.Error("record progress", "err", err)
		}
	}
	killing := false
	var force <-chan time.Time
	for {
		select {
		case ws := <-exited:
			rd.Read(true, collect)
			save()
			return ws, killing
		case <-wake:
			if err := rd.Read(false, collect); err != nil {
				sv.log.Error("read turn", "err", err)
			}
			if len(changes) > 0 && flush == nil {
				flush = time.After(max(0, flushEvery-time.Since(lastFlush)))
			}
		case <-flush:
			flush = nil
			save()
		case <-ctx.Done():
			if killing {
				continue
			}
			ctx = context.Background() // a second signal changes nothing
			killing = true
			sv.log.Info("stopping agent", "grace", grace)
			unix.Kill(-agent.PID, unix.SIGTERM)
			force = time.After(grace)
		case <-force:
			sv.log.Info("grace period over; SIGKILL")
			unix.Kill(-agent.PID, unix.SIGKILL)
			force = nil
		}
	}
}

// endTurn records how a turn ended. code is nil when no agent ran.
func (sv *supervisor) endTurn(t *Turn, code *int, killed bool, startErr string) error {
	stderrTail := ""
	if code != nil && *code != 0 && !killed {
		stderrTail = lastLines(sv.st.StderrPath(sv.id, t.N), 3)
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
		return fmt.Errorf("record turn %d: %w", t.N, err)
	}
	sv.log.Info("turn ended", "turn", t.N, "exit", code, "killed", killed, "err", startErr)
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
