package sessions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/workspace"
)

// verifyIn runs the verify command on exactly the commit that would land,
// in a checkout of its own (workspace.VerifyCheckout) made for the run and
// removed after it: the worker's worktree is never touched. It runs in
// dir's place in the checkout (the directory the landing was asked from),
// contained (runVerify), for at most opt.VerifyTimeout.
func (m *Manager) verifyIn(ctx context.Context, w *workspace.Worktree, commit string, subdir string, opt LandOptions) error {
	co, err := w.NewVerifyCheckout(ctx, commit)
	if err != nil {
		return err
	}
	defer func() {
		if err := co.Remove(context.WithoutCancel(ctx)); err != nil {
			m.warn(fmt.Errorf("remove the verify checkout %s: %w", co.Path, err))
		}
	}()
	dir := filepath.Join(co.Path, subdir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = co.Path
	}
	timeout := opt.VerifyTimeout
	if timeout <= 0 {
		timeout = workspace.DefaultVerifyTimeout
	}
	return workspace.RunVerify(ctx, m.st.Dir(), dir, opt.Verify, opt.VerifyOut, timeout)
}
