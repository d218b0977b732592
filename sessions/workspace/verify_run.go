package workspace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
)

// VerifyError is a verify command that failed on what would have landed.
type VerifyError struct {
	Command string
	Code    int
	// Tail is the end of its output.
	Tail string
}

func (e *VerifyError) Error() string {
	msg := fmt.Sprintf("verify %q failed with exit code %d", e.Command, e.Code)
	if e.Tail != "" {
		msg += ":\n" + e.Tail
	}
	return msg
}

// verifyTail is how much of a verify command's output an error keeps.
const verifyTail = 2048

// DefaultVerifyTimeout is how long a verify command may run unless the
// landing says otherwise: a test suite's time, with room.
const DefaultVerifyTimeout = 30 * time.Minute

// RunVerify runs command with sh -c in dir; its output goes to out (if
// any), and its end is kept for the error. Everything it starts is
// contained as a worker is: in a cgroup of its own where the machine
// gives zwarm one (else in a process group), swept when it ends, when ctx
// ends or timeout passes, and when this process dies, however it dies: a
// guard outside the group, holding only a pipe from this process, sweeps
// it as soon as that pipe closes.
//
// With writable set, it is started through confineHelper (zwarm
// __confine: proc.Confined) and may write only beneath those dirs, a
// temporary dir of its own ($TMPDIR), removed after it, and caches of the
// verifies' own: the command runs the worker's code (its tests), which
// must not reach your checkout, your repository or the state dir. warn
// hears that nothing here can confine it, when it runs with your rights.
func RunVerify(ctx context.Context, stateDir, dir, command string, out io.Writer, timeout time.Duration, confineHelper, writable []string, warn func(error)) error {
	name := fmt.Sprintf("verify-%d-%d", os.Getpid(), time.Now().UnixNano())
	conf, err := confine(command, name, confineHelper, writable, warn)
	if err != nil {
		return err
	}
	defer conf.close()
	tail := &tailBuffer{max: verifyTail}
	var w io.Writer = tail
	if out != nil {
		w = io.MultiWriter(out, tail)
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	group, gerr := proc.MakeGroup(name)
	if gerr == nil {
		group.Tag(stateDir)
	}
	newCmd := func() *exec.Cmd {
		argv := conf.argv([]string{"/bin/sh", "-c", command})
		cmd := exec.CommandContext(tctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.Env = dir, w, w, conf.env
		// A session of its own: no controlling terminal, whose input it
		// could type into (TIOCSTI) for your shell to run.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		if group != nil {
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(group.File().Fd())
		}
		cmd.Cancel = func() error {
			// Its process group, and what left it (setsid) but not the group.
			if group != nil {
				for _, pid := range proc.GroupPIDs(group.Dir()) {
					syscall.Kill(pid, syscall.SIGTERM)
				}
			}
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		}
		cmd.WaitDelay = 5 * time.Second
		return cmd
	}
	// The guard starts first, so that a land killed as the command
	// starts still has its cgroup swept; it hears the process group once
	// there is one.
	guard := startGuard(group, proc.MarkerEnv+"="+name)
	cmd := newCmd()
	err = cmd.Start()
	if err != nil && group != nil {
		// A cgroup zwarm may make but not start a process in (a
		// delegation that stops short): its process group contains it.
		group.Close(context.WithoutCancel(ctx))
		group = nil
		cmd = newCmd()
		err = cmd.Start()
	}
	if err != nil {
		guard.stop()
		return fmt.Errorf("verify %q could not run: %w", command, err)
	}
	guard.watch(cmd.Process.Pid)
	err = cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left running
	sweepVerify(context.WithoutCancel(ctx), name, group)
	guard.stop()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("verify %q was stopped: %w", command, ctx.Err())
	case tctx.Err() != nil:
		return fmt.Errorf("verify %q did not finish within %s and was stopped (--verify-timeout sets the limit)", command, timeout)
	}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			return fmt.Errorf("verify %q could not run: %w", command, err)
		}
		return &VerifyError{Command: command, Code: ee.ExitCode(), Tail: strings.TrimSpace(tail.String())}
	}
	return nil
}

// sweepVerify stops whatever the verify run name left running: its
// cgroup, then what carries its marker, and closes the cgroup.
func sweepVerify(ctx context.Context, name string, group *proc.Group) {
	scope := proc.Scope{ID: name}
	if group != nil {
		scope.Cgroup = group.Dir()
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	scope.Sweep(sctx)
	cancel()
	if group != nil {
		group.Close(ctx)
	}
}

// guardScript sweeps a verify run once its stdin closes, which happens
// when the land that started it ends, however it ends (SIGKILL, a closed
// terminal). Its first line is the run's process group, its second
// "done" once the run is over and swept. It ignores the signals a closing
// terminal sends, and is in a process group of its own, so it outlives
// the land it guards.
const guardScript = `trap '' HUP INT TERM QUIT
read pgid
read done
[ "$done" = done ] && exit 0
if [ -n "$1" ] && [ -d "$1" ]; then
  if [ -w "$1/cgroup.kill" ]; then echo 1 > "$1/cgroup.kill"; fi
  for i in 1 2 3 4 5 6 7 8 9 10; do
    for p in $(cat "$1/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    rmdir "$1" 2>/dev/null && break
    sleep 0.1
  done
fi
case "$pgid" in ''|*[!0-9]*) ;; *) kill -9 -- "-$pgid" 2>/dev/null ;; esac
if [ -n "$2" ]; then
  for p in /proc/[0-9]*; do
    tr '\0' '\n' < "$p/environ" 2>/dev/null | grep -qxF -- "$2" && kill -9 "${p#/proc/}" 2>/dev/null
  done
fi
exit 0`

// verifyGuard is the guard of one verify run; nil (no guard could start)
// guards nothing.
type verifyGuard struct {
	w       *os.File
	cmd     *exec.Cmd
	watched bool
}

// startGuard starts the guard of a verify run in group (nil: no cgroup,
// only its process group, told by watch, is swept).
func startGuard(group *proc.Group, marker string) *verifyGuard {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	dir := ""
	if group != nil {
		dir = group.Dir()
	}
	cmd := exec.Command("/bin/sh", "-c", guardScript, "zwarm-verify-guard", dir, marker)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil
	}
	return &verifyGuard{w: w, cmd: cmd}
}

// watch tells the guard the run's process group.
func (g *verifyGuard) watch(pgid int) {
	if g != nil {
		fmt.Fprintf(g.w, "%d\n", pgid)
		g.watched = true
	}
}

// stop ends the guard and waits for it: the run is over, and swept (its
// process group may be another's by now).
func (g *verifyGuard) stop() {
	if g == nil {
		return
	}
	if !g.watched {
		g.w.WriteString("\n") // no process group
	}
	g.w.WriteString("done\n")
	g.w.Close()
	g.cmd.Wait()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > t.max {
		p = p[len(p)-t.max:]
	}
	t.buf.Write(p)
	if extra := t.buf.Len() - t.max; extra > 0 {
		t.buf.Next(extra)
	}
	return n, nil
}

func (t *tailBuffer) String() string { return strings.ToValidUTF8(t.buf.String(), "\uFFFD") }

// Verify runs command on exactly commit, in a checkout of its own
// (NewVerifyCheckout) made for the run and removed after it, so the
// worktree itself is never touched: in subdir of the checkout (where the
// landing was asked from) if it has one, contained (RunVerify), for at
// most timeout (DefaultVerifyTimeout when 0). warn hears of a checkout
// that could not be removed.
func (w *Worktree) Verify(ctx context.Context, stateDir, commit, subdir, command string, out io.Writer, timeout time.Duration, confineHelper, writable []string, warn func(error)) error {
	co, err := w.NewVerifyCheckout(ctx, commit)
	if err != nil {
		return err
	}
	defer func() {
		if err := co.Remove(context.WithoutCancel(ctx)); err != nil {
			warn(fmt.Errorf("remove the verify checkout %s: %w", co.Path, err))
		}
	}()
	dir := filepath.Join(co.Path, subdir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = co.Path
	}
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	// It writes its checkout, what was linked in from the worker's
	// worktree (a copied .env, what setup made), and what the config adds;
	// nothing else of yours, nor of the worker's, whose next turn would
	// commit it.
	may := append([]string{co.Path}, w.linkedIn()...)
	return RunVerify(ctx, stateDir, dir, command, out, timeout, confineHelper, append(may, writable...), warn)
}

// linkedIn are the paths of the worker's worktree a verify checkout links
// in that it may write: files and directories of the worktree's own. A
// symlink is not one (the worker could point it at your .git, and one
// zwarm made for [worktrees] symlink points at your checkout's
// node_modules), nor is anything reached through one that leads out of
// the worktree.
func (w *Worktree) linkedIn() []string {
	root, err := os.OpenRoot(w.Path)
	if err != nil {
		return nil
	}
	defer root.Close()
	var out []string
	for _, e := range w.Exclude {
		if fi, err := root.Lstat(e); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			out = append(out, filepath.Join(w.Path, e))
		}
	}
	return out
}
