package sessions

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zwarm/zwarm/sessions/workspace"
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

// verifyIn runs the verify command on exactly the commit that would land,
// checked out (detached) in the worker's own worktree, which has what
// was brought along (node_modules, .env); a rebase has it checked out
// already. It runs in dir's place in the checkout (the directory the
// landing was asked from), in a process group of its own that a
// cancelled ctx stops. The worktree is put back on its branch after.
func (m *Manager) verifyIn(ctx context.Context, w *workspace.Worktree, commit string, strategy workspace.Strategy, subdir string, opt LandOptions) error {
	if !w.Exists() {
		return fmt.Errorf("its worktree is gone, and verify runs in it: land it without --verify, or send it a follow-up, which makes it again")
	}
	if strategy != workspace.Rebase {
		if err := w.Checkout(ctx, commit); err != nil {
			return fmt.Errorf("check out what would land: %w", err)
		}
	}
	defer func() {
		// What verify made (build output, test files) is its own, not the
		// worker's: the worktree goes back to the worker's commit, and the
		// untracked files verify left go (ignored ones stay, as does what
		// was brought along).
		ctx := context.WithoutCancel(ctx)
		// A rebase has the branch checked out already, but what verify
		// changed in its tracked files must go all the same: left, it
		// kept the worktree after the landing, and the worker's next
		// turn would have committed it as the worker's.
		if err := w.Checkout(ctx, ""); err != nil {
			m.warn(fmt.Errorf("put %s back on its branch: %w", w.Path, err))
		}
		if err := w.CleanUntracked(ctx); err != nil {
			m.warn(fmt.Errorf("remove what verify left in %s: %w", w.Path, err))
		}
	}()
	dir := filepath.Join(w.Path, subdir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = w.Path
	}
	return runVerify(ctx, dir, opt.Verify, opt.VerifyOut)
}

// runVerify runs command with sh -c in dir; its output goes to out (if
// any), and its end is kept for the error.
func runVerify(ctx context.Context, dir, command string, out io.Writer) error {
	tail := &tailBuffer{max: verifyTail}
	var w io.Writer = tail
	if out != nil {
		w = io.MultiWriter(out, tail)
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left running
	}
	if ctx.Err() != nil {
		return fmt.Errorf("verify %q was stopped: %w", command, ctx.Err())
	}
	if err != nil {
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			return fmt.Errorf("verify %q could not run: %w", command, err)
		}
		return &VerifyError{Command: command, Code: code, Tail: strings.TrimSpace(tail.String())}
	}
	return nil
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
