package supervisor

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/proc"
	"golang.org/x/sys/unix"
)

// agentProc is one running agent process and the goroutines that serve it:
// one drains stdout into chunks, one copies stderr to the turn's stderr
// file, one feeds stdin, one reaps. The supervisor owns them all: an
// agentRun returns only after each has ended.
type agentProc struct {
	ref        *proc.Ref
	stdin      *stdinFeeder // nil for stdin /dev/null
	chunks     *chunkReader
	stderr     *switchWriter
	stderrDone chan struct{}
	exited     chan unix.WaitStatus
	reaped     chan struct{}
	out        *os.File // the current turn's stdout file
}

// startAgent starts cmd for turn n in its own process group (and the
// session's cgroup, when there is one), its stdout and stderr drained into
// the turn's files and its stdin fed by a goroutine of its own.
func (sv *supervisor) startAgent(id string, n int, cmd agent.Command) (*agentProc, error) {
	out, errf, err := sv.turns.Files.TurnFiles(n)
	if err != nil {
		return nil, err
	}
	pp, err := newPipes(cmd.Input != nil || cmd.Stdin != nil)
	if err != nil {
		out.Close()
		errf.Close()
		return nil, err
	}
	started, err := sv.spawnContained(id, cmd, pp)
	for _, f := range []*os.File{pp.inR, pp.outW, pp.errW} {
		if f != nil {
			f.Close() // the child holds its own copies
		}
	}
	if err != nil {
		for _, f := range []*os.File{pp.inW, pp.outR, pp.errR, out, errf} {
			if f != nil {
				f.Close()
			}
		}
		return nil, err
	}
	ref, err := proc.RefOf(started.Pid)
	if err != nil {
		ref = &proc.Ref{PID: started.Pid}
	}
	started.Release() // reaped by reap, which sees every child

	p := &agentProc{ref: ref, chunks: newChunkReader(pp.outR), stderr: &switchWriter{f: errf},
		stderrDone: make(chan struct{}), exited: make(chan unix.WaitStatus, 1), reaped: make(chan struct{}), out: out}
	if pp.inW != nil {
		p.stdin = newStdinFeeder(pp.inW)
		if cmd.Stdin != nil {
			p.stdin.feed(cmd.Stdin)
			p.stdin.closeAfterQueued()
		}
	}
	go p.chunks.run()
	go func() {
		defer close(p.stderrDone)
		io.Copy(p.stderr, pp.errR)
		pp.errR.Close()
	}()
	go func() {
		defer close(p.reaped)
		reap(ref.PID, p.exited)
	}()
	return p, nil
}

// pipes are the agent's stdin (a pipe, or /dev/null: inW nil), stdout and
// stderr: the R ends the supervisor reads, the W ends it writes, each
// end the child's closed once it started.
type pipes struct {
	inR, inW, outR, outW, errR, errW *os.File
}

func newPipes(stdin bool) (*pipes, error) {
	p := &pipes{}
	var err error
	if stdin {
		p.inR, p.inW, err = os.Pipe()
	} else {
		p.inR, err = os.Open(os.DevNull)
	}
	if err == nil {
		p.outR, p.outW, err = os.Pipe()
	}
	if err == nil {
		p.errR, p.errW, err = os.Pipe()
	}
	if err != nil {
		for _, f := range []*os.File{p.inR, p.inW, p.outR, p.outW, p.errR, p.errW} {
			if f != nil {
				f.Close()
			}
		}
		return nil, err
	}
	return p, nil
}

// spawnContained starts cmd in a process group of its own, marked with
// the session's id, killed if the supervisor dies, and in the session's
// cgroup when there is one (else contained by marker alone).
func (sv *supervisor) spawnContained(id string, cmd agent.Command, pp *pipes) (*os.Process, error) {
	env := append(os.Environ(), cmd.Env...)
	env = append(env, proc.MarkerEnv+"="+id)
	attr := &syscall.SysProcAttr{
		Setpgid: true,
		// If the supervisor itself is killed, the agent must not run on
		// unsupervised.
		Pdeathsig: syscall.SIGKILL,
	}
	path, argv := cmd.Path, append([]string{cmd.Path}, cmd.Args...)
	if g := sv.guard; len(g) > 0 {
		// The guard, told of the supervisor's death, kills the agent
		// and all it started (proc.Guard).
		path, argv = g[0], append(append(append([]string(nil), g...), "--died", sv.st.Files().SupervisorDied(id), "--"), argv...)
		attr.Pdeathsig = proc.GuardOrphaned
	}
	if sv.cg != nil {
		if err := sv.cg.newLeaf(); err != nil {
			sv.log.Warn("cannot make the agent's cgroup; using the marker only", "err", err)
			sv.closeCgroup()
		} else {
			attr.UseCgroupFD, attr.CgroupFD = true, sv.cg.fd
		}
	}
	pa := &os.ProcAttr{Dir: cmd.Dir, Env: env, Files: []*os.File{pp.inR, pp.outW, pp.errW}, Sys: attr}
	started, err := os.StartProcess(path, argv, pa)
	if err != nil && sv.cg != nil {
		// The cgroup could not take the process (a controller's limit, a
		// kernel without clone3 into cgroups): run it contained by marker.
		sv.log.Warn("cannot start the agent in the session's cgroup; using the marker only", "err", err)
		attr.UseCgroupFD, attr.CgroupFD = false, 0
		sv.closeCgroup()
		started, err = os.StartProcess(path, argv, pa)
	}
	return started, err
}

// reap waits for every child of the supervisor: the agent, and as child
// subreaper also every orphaned descendant. It reports the agent's status
// and returns when no child is left, which the turn guarantees by sweeping.
func reap(agent int, exited chan<- unix.WaitStatus) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return // ECHILD: nothing left to wait for
		}
		if pid == agent {
			exited <- ws
		}
	}
}

// exitCode turns a wait status into a shell-style exit code (128+signal).
func exitCode(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// switchWriter writes to whichever file is current: the agent's stderr goes
// to the stderr file of the turn it is serving. It never fails: once a
// write to a file does, the rest for that file is counted and dropped, so
// the agent's stderr is drained on (a closed pipe would kill it with
// SIGPIPE) and its stdout still recorded.
type switchWriter struct {
	mu   sync.Mutex
	f    *os.File
	n    int64          // bytes written to f
	lost *droppedOutput // what a failed write to f dropped
}

func (w *switchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.f == nil:
	case w.lost != nil:
		w.lost.bytes += int64(len(p))
	default:
		k, err := w.f.Write(p)
		w.n += int64(k)
		if err != nil {
			w.lost = &droppedOutput{from: w.n, bytes: int64(len(p) - k), err: err}
		}
	}
	return len(p), nil
}

// dropped is what the current file did not take, nil if it took all.
func (w *switchWriter) dropped() *droppedOutput {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lost == nil {
		return nil
	}
	d := *w.lost
	return &d
}

func (w *switchWriter) set(f *os.File) {
	w.mu.Lock()
	old := w.f
	w.f, w.n, w.lost = f, 0, nil
	w.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// sigGroup signals the agent's process group. A stopped agent (SIGSTOP)
// would hold SIGTERM pending forever; SIGCONT lets it act on it.
func sigGroup(pgid int, sig unix.Signal) {
	unix.Kill(-pgid, sig)
	if sig != unix.SIGKILL {
		unix.Kill(-pgid, unix.SIGCONT)
	}
}
