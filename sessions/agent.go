package sessions

import (
	"bytes"
	"context"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// agentProc is one running agent process and the goroutines that drain it.
// The supervisor owns them all: drive returns only after each has ended.
type agentProc struct {
	ref        *ProcRef
	stdin      *os.File // the live input pipe; nil for stdin /dev/null
	chunks     chan []byte
	stderr     *switchWriter
	stderrDone chan struct{}
	exited     chan unix.WaitStatus
	reaped     chan struct{}
	out        *os.File // the current turn's stdout file
}

// startAgent starts cmd for turn n in its own process group, its stdout and
// stderr drained into the turn's files.
func (sv *supervisor) startAgent(id string, n int, cmd Command) (*agentProc, error) {
	out, errf, err := sv.st.turnFiles(id, n)
	if err != nil {
		return nil, err
	}
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	var inR, inW *os.File
	if cmd.Input != nil {
		inR, inW, err = os.Pipe()
	} else {
		inR, err = os.Open(os.DevNull)
	}
	if err != nil {
		closeAll(out, errf)
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(out, errf, inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(out, errf, inR, inW, outR, outW)
		return nil, err
	}
	env := append(os.Environ(), cmd.Env...)
	env = append(env, MarkerEnv+"="+id)
	proc, err := os.StartProcess(cmd.Path, append([]string{cmd.Path}, cmd.Args...), &os.ProcAttr{
		Dir:   cmd.Dir,
		Env:   env,
		Files: []*os.File{inR, outW, errW},
		Sys: &syscall.SysProcAttr{
			Setpgid: true,
			// If the supervisor itself is killed, the agent must not run on
			// unsupervised.
			Pdeathsig: syscall.SIGKILL,
		},
	})
	closeAll(inR, outW, errW) // the child holds its own copies
	if err != nil {
		closeAll(out, errf, inW, outR, errR)
		return nil, err
	}
	ref, err := refOf(proc.Pid)
	if err != nil {
		ref = &ProcRef{PID: proc.Pid}
	}
	proc.Release() // reaped by reap, which sees every child
	if _, err := sv.st.update(id, func(s *Session) error {
		s.Agent, s.PID = ref, ref.PID
		return nil
	}); err != nil {
		sv.log.Error("record agent pid", "err", err)
	}

	p := &agentProc{ref: ref, stdin: inW, chunks: make(chan []byte), stderr: &switchWriter{f: errf},
		stderrDone: make(chan struct{}), exited: make(chan unix.WaitStatus, 1), reaped: make(chan struct{}), out: out}
	go readChunks(outR, p.chunks)
	go func() {
		defer close(p.stderrDone)
		io.Copy(p.stderr, errR)
		errR.Close()
	}()
	go func() {
		defer close(p.reaped)
		reap(ref.PID, p.exited)
	}()
	return p, nil
}

// drive runs a started agent to its end: it writes its output to the turn
// files, folds the events into the record (at most every flushEvery), feeds
// queued follow-ups to a live process, and on ctx's end stops it: SIGTERM
// to its group, the grace period, SIGKILL. It returns the last turn the
// process served, its exit code, and whether it was killed.
func (sv *supervisor) drive(ctx context.Context, id string, n int, ad Adapter, p *agentProc, cmd Command, grace time.Duration) (int, int, bool) {
	parser := ad.NewParser()
	var split lineSplitter
	var pending []Event
	var written int64
	turnEnded := false
	emit := func(line []byte) {
		for _, ev := range parser.ParseLine(line) {
			pending = append(pending, ev)
			turnEnded = turnEnded || ev.Type == EventTurnCompleted
		}
	}
	save := func() {
		evs, off := pending, written-split.pending()
		pending = nil
		if _, err := sv.st.update(id, func(s *Session) error {
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
	if cmd.Input != nil {
		prompt := ""
		if s, err := sv.st.load(id); err == nil {
			prompt = s.current().Prompt
		}
		if _, err := p.stdin.Write(cmd.Input(prompt)); err != nil {
			sv.log.Error("write prompt", "err", err)
		}
	}

	var (
		ws        unix.WaitStatus
		exited    bool
		killing   bool
		flush     <-chan time.Time
		force     <-chan time.Time
		lastFlush time.Time
		chunks    = p.chunks
		done      = ctx.Done()
	)
	for !exited || chunks != nil {
		select {
		case c, ok := <-chunks:
			if !ok {
				chunks = nil
				split.flush(emit)
				continue
			}
			for len(c) > 0 {
				line := c
				if i := bytes.IndexByte(c, '\n'); i >= 0 {
					line = c[:i+1]
				}
				c = c[len(line):]
				if _, err := p.out.Write(line); err != nil {
					sv.log.Error("write turn file", "err", err)
				}
				written += int64(len(line))
				split.write(line, emit)
				if turnEnded && p.stdin != nil {
					turnEnded = false
					save()
					n, written = sv.nextLive(id, n, p, cmd), 0
					split = lineSplitter{}
				}
			}
			if len(pending) > 0 && flush == nil {
				flush = time.After(max(0, flushEvery-time.Since(lastFlush)))
			}
		case <-flush:
			flush, lastFlush = nil, time.Now()
			save()
		case ws = <-p.exited:
			exited = true
			// Whatever the agent left behind (a server it started, a command
			// that escaped with setsid) dies with it; that also closes the
			// last copies of its output pipes.
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := sweep(sctx, id, os.Getpid()); err != nil {
				sv.log.Error("sweep", "err", err)
			}
			cancel()
		case <-done:
			done, killing = nil, true
			sv.log.Info("stopping agent", "grace", grace)
			unix.Kill(-p.ref.PID, unix.SIGTERM)
			force = time.After(grace)
		case <-force:
			force = nil
			sv.log.Info("grace period over; SIGKILL")
			unix.Kill(-p.ref.PID, unix.SIGKILL)
		}
	}
	<-p.stderrDone
	<-p.reaped
	if p.stdin != nil {
		p.stdin.Close()
	}
	p.out.Close()
	p.stderr.set(nil)
	save()
	return n, exitCode(ws), killing
}

// nextLive ends live turn n, which the agent just completed, and hands the
// next queued follow-up to the same process as turn n+1. With nothing
// queued it closes the agent's stdin, so it finishes, and returns n: the
// turn's exit code is recorded when the process has exited.
func (sv *supervisor) nextLive(id string, n int, p *agentProc, cmd Command) int {
	var next *Turn
	_, err := sv.st.update(id, func(s *Session) error {
		entries, err := sv.st.inbox(id)
		if err != nil {
			return err
		}
		for i := range entries {
			e := &entries[i]
			if e.State != InboxQueued {
				continue
			}
			now := time.Now().UTC()
			cur := s.current()
			cur.EndedAt, cur.Status = &now, StatusCompleted
			if cur.AgentFailed {
				cur.Status = StatusFailed
				cur.Error = firstNonEmpty(cur.Error, cur.AgentError, "the agent reported failure")
			}
			e.State, e.Turn, e.DeliveredAt = InboxDelivered, n+1, &now
			if err := sv.st.writeInbox(id, e); err != nil {
				return err
			}
			s.Turns = append(s.Turns, Turn{N: n + 1, Prompt: e.Text, InboxID: e.ID, StartedAt: now,
				Status: StatusRunning, Live: true, Resumed: true})
			s.PendingInjects = max(0, s.PendingInjects-1)
			s.refresh(sv.prices)
			next = s.current()
			return nil
		}
		return nil
	})
	if err != nil {
		sv.log.Error("hand over a follow-up", "err", err)
	}
	if next == nil {
		p.stdin.Close()
		p.stdin = nil
		return n
	}
	out, errf, err := sv.st.turnFiles(id, next.N)
	if err != nil {
		sv.log.Error("open turn files", "err", err)
		return next.N
	}
	p.out.Close()
	p.out = out
	p.stderr.set(errf)
	if _, err := p.stdin.Write(cmd.Input(next.Prompt)); err != nil {
		sv.log.Error("write follow-up", "err", err)
	}
	sv.log.Info("follow-up delivered live", "turn", next.N)
	return next.N
}
