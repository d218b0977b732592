package supervisor

import (
	"github.com/zwarm/zwarm/sessions/telemetry"

	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"golang.org/x/sys/unix"
)

// phase is where an agent process is in its life, as its supervisor sees
// it. The process's exit and the end of its output are tracked beside the
// phase: the run is over when both have happened, whatever the phase.
//
//	serving  ─turn.completed, live, follow-up queued─► serving (the next turn)
//	serving  ─turn.completed, live, nothing queued──► closing (stdin closed)
//	serving, closing ─stop asked (kill, signal)─────► stopping (SIGTERM to the group)
//	serving ─its turn interrupted (polled)──────────► stopping (the turn ends interrupted)
//	serving, closing ─output cannot be recorded─────► stopping (the turn fails)
//	stopping ─grace period over─────────────────────► forcing (SIGKILL to the group)
//	any      ─agent exited──────────────────────────► sweep every process of the session
//
// A full disk is the exception to "cannot be recorded": the agent runs on,
// and what it prints is parsed but no longer kept (dropped), so that its
// final message and usage still reach the record, through the session's
// reserve; the turn fails once the agent has ended it.
type phase int

const (
	serving phase = iota
	closing
	stopping
	forcing
)

var phaseNames = [...]string{"serving", "closing", "stopping", "forcing"}

func (p phase) String() string { return phaseNames[p] }

// agentRun drives one agent process from start to exit: it records its
// output in the turn files, folds the events into the record (at most every
// flushEvery), hands queued follow-ups to a live agent, and stops it when
// asked. Its loop never blocks on the agent: stdin is fed by the agent's
// own goroutine and every channel it waits on is drained by one.
type agentRun struct {
	sv     *supervisor
	id     string
	n      int // the turn being served
	parser agent.Parser
	p      *agentProc
	cmd    agent.Command
	grace  time.Duration

	phase phase
	// signalled says zwarm signalled the agent before it exited: only then
	// was the turn killed rather than finished; interrupted says it was
	// for an interrupt of the turn, not a kill of the session.
	signalled   bool
	interrupted bool
	exited      bool
	ws          unix.WaitStatus
	failure     string // why zwarm fails the turn (its output cannot be recorded)
	// dropped is what a full disk kept out of the current turn file;
	// stderrLost what did not reach its stderr file.
	dropped, stderrLost *droppedOutput

	// oneTurn makes a live agent serve one turn only: in a worktree, each
	// turn's work is committed when its process has exited (no git runs
	// beside an agent: the reaper would take its exit status), so queued
	// follow-ups go to a resumed process of their own.
	oneTurn bool

	// cut holds back an unfinished line, so that the turn file gets
	// whole lines, and cuts one longer than agent.MaxLineBytes.
	cut       agent.LineCutter
	pending   []record.Event
	written   int64 // bytes of the current turn file, whole lines (those a full disk dropped included)
	turnDone  bool  // the current turn's completion event was parsed
	lastFlush time.Time
	lastEvent time.Time
	flush     <-chan time.Time
	force     <-chan time.Time

	// tel is the endpoint the agent reports each call's usage to, when
	// the turn has one (nil: it has not).
	tel *usageEndpoint
	// clocks note when each turn's items were reported, by turn.
	clocks map[int]*telemetry.Clock
}

func newAgentRun(sv *supervisor, id string, n int, parser agent.Parser, p *agentProc, cmd agent.Command, grace time.Duration) *agentRun {
	return &agentRun{sv: sv, id: id, n: n, parser: parser, p: p, cmd: cmd, grace: grace}
}

// run drives the agent until it has exited and all its output is recorded.
func (a *agentRun) run(ctx context.Context) state.TurnEnd {
	a.setLive(a.cmd.Input != nil && !a.oneTurn)
	if a.cmd.Input != nil {
		a.p.stdin.feed(a.cmd.Input(a.prompt()))
	}
	chunks, done := a.p.chunks.Chunks(), ctx.Done()
	poll := time.NewTicker(interruptPoll)
	defer poll.Stop()
	var reported <-chan struct{}
	if a.tel != nil {
		reported = a.tel.ready
	}
	for !a.exited || chunks != nil {
		select {
		case <-reported:
			a.callsReported()
		case <-poll.C:
			a.checkInterrupt()
		case c, ok := <-chunks:
			if !ok {
				chunks = nil
				a.line(a.cut.Flush())
				continue
			}
			a.onChunk(ctx, c)
			a.p.chunks.Done(c)
		case <-a.flush:
			a.flush = nil
			a.save()
		case ws := <-a.p.exited:
			a.onExit(ws)
		case <-done:
			done = nil
			a.stop("stopping agent")
		case <-a.force:
			a.force = nil
			a.phase = forcing
			a.sv.log.Info("grace period over; SIGKILL")
			sigGroup(a.p.ref.PID, unix.SIGKILL)
		}
	}
	a.finish()
	code := exitCode(a.ws)
	end := state.TurnEnd{N: a.n, ExitCode: &code, Killed: a.signalled && a.failure == "", Reason: a.failure,
		Interrupted: a.interrupted && a.failure == ""}
	if d := a.dropped; d != nil {
		// The note stays whatever ends the turn (a kill, say); the
		// reason fails it, since part of its output is lost.
		end.Notes = append(end.Notes, d.note())
		if end.Reason == "" {
			end.Reason = fmt.Sprintf("%s: %v", d.note(), d.err)
		}
	}
	if a.stderrLost != nil {
		end.Notes = append(end.Notes, a.stderrLost.noteStderr())
	}
	return end
}

// onChunk records a piece of stdout line by line, so a turn file can be cut
// exactly after the line that completed its turn.
func (a *agentRun) onChunk(ctx context.Context, c []byte) {
	// Once a chunk, not once a line: a turn file removed while the agent
	// was quiet, or during the last chunk, is made again before this one
	// is written (an fstat a line would cost more than the line's parse).
	if a.dropped == nil && a.failure == "" && a.outRemoved() {
		a.reopenTurnFile()
	}
	for len(c) > 0 {
		line := c
		if i := bytes.IndexByte(c, '\n'); i >= 0 {
			line = c[:i+1]
		}
		c = c[len(line):]
		a.line(a.cut.Add(line))
		if a.turnDone && a.p.stdin != nil && a.cmd.Input != nil && a.phase == serving {
			a.turnDone = false
			a.save()
			if a.oneTurn {
				a.closeInput()
			} else {
				a.nextLive(ctx)
			}
		}
	}
	if len(a.pending) > 0 && a.flush == nil {
		a.flush = time.After(max(0, flushEvery-time.Since(a.lastFlush)))
	}
}

// line records and parses a line the cutter let through (nil: none was
// completed).
func (a *agentRun) line(rec []byte) {
	if rec == nil {
		return
	}
	switch {
	case a.dropped != nil:
		a.dropped.bytes += int64(len(rec))
	case a.failure == "":
		a.record(rec)
	}
	a.written += int64(len(rec))
	a.parse(agent.ParseableLine(rec))
}

// record appends a line of the agent's output to the turn file.
func (a *agentRun) record(line []byte) {
	n, err := a.p.out.Write(line)
	switch {
	case err == nil:
	case state.IsNoSpace(err):
		a.dropOutput(n, int64(len(line)), err)
	default:
		a.fail(fmt.Sprintf("cannot record the agent's output in %s: %v", a.sv.st.TurnPath(a.id, a.n), err))
	}
}

// droppedOutput is the output of the agent that a full disk kept out of
// its turn file, from byte from of the file on.
type droppedOutput struct {
	from, bytes int64
	err         error
}

func (d *droppedOutput) note() string {
	return fmt.Sprintf("disk full: output from byte %d on was not recorded (%d bytes)", d.from, d.bytes)
}

func (d *droppedOutput) noteStderr() string {
	return fmt.Sprintf("%sstderr from byte %d on was not recorded (%d bytes): %v", diskFull(d.err), d.from, d.bytes, d.err)
}

// dropOutput stops recording the agent's output: the disk took n bytes of
// a line of size bytes, then was full. Those n are taken back, so the turn
// file ends with a whole line, and from then on the output is parsed (line
// by line, as always: nothing of it is held) and counted, not kept. The
// agent is not stopped: a stopped agent could not say its last words, its
// final message and usage, which reach the record through the session's
// reserve. The turn fails once the agent has ended it, saying how much of
// its output was not recorded.
func (a *agentRun) dropOutput(n int, size int64, err error) {
	d := &droppedOutput{from: a.written + int64(n), bytes: size - int64(n), err: err}
	if fi, serr := a.p.out.Stat(); serr == nil {
		d.from = fi.Size()
		if n > 0 && a.p.out.Truncate(fi.Size()-int64(n)) == nil {
			d.from, d.bytes = fi.Size()-int64(n), size
		}
	}
	a.dropped = d
	a.sv.log.Error("disk full: no longer recording the agent's output; it runs on", "turn", a.n, "from", d.from, "err", err)
}

func (a *agentRun) parse(line []byte) {
	evs := a.parser.ParseLine(line)
	if len(evs) > 0 {
		a.lastEvent = time.Now().UTC()
		a.clock().Observe(evs, a.lastEvent)
	}
	for _, ev := range evs {
		a.pending = append(a.pending, ev)
		a.turnDone = a.turnDone || ev.Type == record.EventTurnCompleted || ev.Type == record.EventTurnFailed
	}
	if len(a.pending) >= maxPending {
		// A chatty agent prints thousands of events between two saves;
		// only those that change the record are kept until the next.
		a.pending = record.CompactEvents(a.pending)
	}
}

// clock is the current turn's.
func (a *agentRun) clock() *telemetry.Clock {
	c := a.clocks[a.n]
	if c == nil {
		if a.clocks == nil {
			a.clocks = map[int]*telemetry.Clock{}
		}
		c = &telemetry.Clock{Words: a.sv.tracer.Content()}
		a.clocks[a.n] = c
	}
	return c
}

// maxPending is how many events wait for the next save before those that
// do not change the record are let go.
const maxPending = 1024

// onExit sweeps whatever the agent left behind (a server it started, a
// command that escaped with setsid); that also closes the last copies of
// its output pipes, so the output ends.
func (a *agentRun) onExit(ws unix.WaitStatus) {
	a.exited, a.ws = true, ws
	if a.p.stdin != nil {
		a.p.stdin.stop()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.sv.sweep(sctx); err != nil {
		a.sv.log.Error("sweep", "err", err)
	}
}

// stop asks the agent to stop: SIGTERM to its group, SIGKILL after the grace.
func (a *agentRun) stop(why string) {
	if a.phase >= stopping || a.exited {
		return
	}
	a.phase, a.signalled = stopping, true
	sig := a.cmd.StopSignal
	if sig == 0 {
		sig = unix.SIGTERM
	}
	a.sv.log.Info(why, "grace", a.grace, "signal", sig)
	sigGroup(a.p.ref.PID, sig)
	a.force = time.After(a.grace)
}

// interruptPoll is how often the supervisor reads its record, while a
// turn runs, for an interrupt (state.Turns.InterruptAsked): well
// within a second, and a small file read for a supervisor's loop.
const interruptPoll = 200 * time.Millisecond

// checkInterrupt stops the agent when its turn is to be interrupted
// (inject --interrupt, attach --interrupt): as a kill stops it, the
// graceful signal then force after the grace period; the session goes on
// (the turn's end is recorded interrupted, and the follow-up, or the
// person, takes over the thread). A turn whose agent already ended it is
// left to finish: its follow-up comes next all the same.
func (a *agentRun) checkInterrupt() {
	if a.phase != serving || a.turnDone || a.exited || a.interrupted {
		return
	}
	asked, err := a.sv.turns.InterruptAsked(a.n)
	if err != nil {
		a.sv.log.Error("read the record for an interrupt", "err", err)
		a.sv.fenced(err)
		return
	}
	if asked {
		a.interrupted = true
		a.stop("interrupting the turn")
	}
}

// fail ends the turn as failed for a reason of zwarm's own: the agent is
// stopped, because what it does can no longer be recorded.
func (a *agentRun) fail(reason string) {
	if a.failure != "" {
		return
	}
	a.failure = reason
	a.sv.log.Error("failing the turn", "reason", reason)
	a.stop("stopping agent: its turn failed")
}

// save folds the events parsed since the last save into the record.
func (a *agentRun) save() { a.saveAs(false) }

// saveAs is save; as an outcome (the last save of a turn) it may use the
// session's disk reserve, so that a turn's last words (its final message,
// its usage) reach the record even on a full disk. Events that could not
// be saved are kept for the next save.
func (a *agentRun) saveAs(outcome bool) {
	evs, off, last := a.pending, a.written, a.lastEvent
	a.pending, a.lastFlush = nil, time.Now()
	err := a.sv.turns.RecordProgress(evs, off, last, outcome)
	if err != nil {
		a.pending = append(evs, a.pending...)
		a.sv.log.Error("record progress", "err", err)
		a.sv.fenced(err)
		switch {
		case state.IsNoSpace(err) && outcome:
			a.fail(fmt.Sprintf("%scannot record the session: %v", diskFull(err), err))
		case state.IsNoSpace(err):
			// The outcome may use the reserve; until then the events
			// wait here, only those that change the record.
			a.pending = record.CompactEvents(a.pending)
		}
	}
	if why := a.sv.turns.OverCostLimit(); why != "" {
		// Recorded as the stop's reason; the agent spends no more.
		a.stop("stopping agent: " + why)
	}
}

// nextLive hands the next queued follow-up to the live agent, which just
// completed turn n, as turn n+1, in one update of the record. With nothing
// queued (or a kill in progress) it closes the agent's stdin, so it
// finishes; the turn's end is recorded once the process has exited.
func (a *agentRun) nextLive(ctx context.Context) {
	var next *record.Turn
	if a.failure == "" && a.dropped == nil { // a failing turn hands nothing over
		var err error
		if next, err = a.sv.turns.HandOver(ctx, a.n); err != nil {
			a.sv.log.Error("hand over a follow-up", "err", err)
			a.sv.fenced(err)
		}
	}
	if next == nil {
		a.closeInput()
		return
	}
	out, errf, err := a.sv.turns.Files.TurnFiles(next.N)
	if err != nil {
		a.n = next.N
		a.fail(fmt.Sprintf("cannot open the files of turn %d: %v", next.N, err))
		return
	}
	if d := a.p.stderr.dropped(); d != nil {
		a.sv.log.Error(d.noteStderr(), "turn", a.n)
	}
	a.p.out.Close()
	a.p.out, a.n, a.written = out, next.N, 0
	a.p.stderr.set(errf)
	a.p.stdin.feed(a.cmd.Input(next.Prompt))
	a.sv.log.Info("follow-up delivered live", "turn", next.N)
}

// closeInput ends a live agent's input after the turn it served: it
// finishes, and the end of its turn is recorded once it has exited.
func (a *agentRun) closeInput() {
	a.phase = closing
	a.setLive(false)
	a.p.stdin.closeAfterQueued()
}

// prompt is the prompt of the turn being served.
func (a *agentRun) prompt() string {
	t, err := a.sv.turns.Current()
	if err != nil || t == nil {
		a.sv.log.Error("read the prompt", "err", err)
		return ""
	}
	return t.Prompt
}

// setLive records whether the agent takes follow-ups on its stdin, and which
// process the agent is.
func (a *agentRun) setLive(live bool) {
	if err := a.sv.turns.SetAgent(a.p.ref, live); err != nil {
		a.sv.log.Error("record the agent", "err", err)
		a.sv.fenced(err)
	}
}

// finish waits for the agent's goroutines and records the last progress.
func (a *agentRun) finish() {
	<-a.p.stderrDone
	<-a.p.reaped
	a.p.out.Close()
	a.stderrLost = a.p.stderr.dropped()
	a.p.stderr.set(nil)
	a.saveAs(true)
}

// diskFull is how a reason begins when err is a full disk: the words a
// person looks for.
func diskFull(err error) string {
	if state.IsNoSpace(err) {
		return "disk full: "
	}
	return ""
}

// outRemoved reports whether the current turn file was removed (or
// renamed away) while the agent writes it: what is written to it then is
// lost to every reader.
func (a *agentRun) outRemoved() bool {
	var st unix.Stat_t
	if err := unix.Fstat(int(a.p.out.Fd()), &st); err != nil {
		return false
	}
	return st.Nlink == 0
}

// reopenTurnFile carries on recording a turn whose file was removed: a new
// file at the same path gets the rest of the output, and the turn's record
// says so. The file is created, never opened through what someone may have
// put there.
func (a *agentRun) reopenTurnFile() {
	path := a.sv.st.TurnPath(a.id, a.n)
	f, err := a.sv.turns.Files.NewTurnFile(a.n)
	if err != nil {
		a.fail(fmt.Sprintf("the turn file %s was removed while the turn ran and cannot be made again: %v", path, err))
		return
	}
	a.p.out.Close()
	a.p.out = f
	// Offsets count from the new file's start; a line held back by the
	// cutter goes into the new file whole.
	a.written = 0
	note := fmt.Sprintf("turn file removed while the turn ran; the output from %s on is in a new %s", time.Now().UTC().Format(time.RFC3339), filepath.Base(path))
	a.sv.log.Warn("turn file removed while the turn ran; recording the rest in a new one", "turn", a.n, "path", path)
	if err := a.sv.turns.NoteNewTurnFile(a.n, note); err != nil {
		a.sv.log.Error("record the turn file's removal", "err", err)
		a.sv.fenced(err)
	}
}

// callsReported records, at the next save, the usage of the model calls
// the agent reported while its turn goes on (telemetry), so that a cost
// limit stops the turn at the call that passed it.
func (a *agentRun) callsReported() {
	calls := a.tel.take()
	if a.phase != serving || a.turnDone {
		return // the turn's own report counts
	}
	for i := range calls {
		a.pending = append(a.pending, record.Event{Type: record.EventUsage, Usage: &calls[i]})
	}
	if len(calls) > 0 && a.flush == nil {
		a.flush = time.After(max(0, flushEvery-time.Since(a.lastFlush)))
	}
}
