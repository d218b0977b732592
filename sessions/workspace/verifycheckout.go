package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// VerifyCheckout is a checkout made for one run of a landing's verify
// command: a detached worktree of exactly the commit that would land,
// beside the workers' worktrees, removed after the run. The worker's
// worktree is never touched by a verify: what the command writes, and a
// land cut short by a signal, cannot leave the worker's files changed or
// its HEAD detached, nor be landed with its next turn.
type VerifyCheckout struct {
	Path      string
	commonDir string
}

// verifyPrefix names the verify checkouts; the land that made one is
// named after it (its pid), so a checkout whose land died can be told
// and removed by the next.
const verifyPrefix = "verify-"

// NewVerifyCheckout checks commit out in a checkout of its own, with what
// was brought along to the worker's worktree (and what its setup made:
// Exclude) linked in from there, as the worker has it: node_modules, .env.
func (w *Worktree) NewVerifyCheckout(ctx context.Context, commit string) (*VerifyCheckout, error) {
	root := filepath.Dir(w.Path)
	removeStaleVerifyCheckouts(ctx, w.CommonDir, root)
	path := filepath.Join(root, fmt.Sprintf("%s%s-%d", verifyPrefix, strings.TrimPrefix(w.Branch, "zwarm/"), os.Getpid()))
	c := &VerifyCheckout{Path: path, commonDir: w.CommonDir}
	c.Remove(ctx) // one this process left before (a land --all, a pid reused)
	g := git{dir: w.CommonDir, writes: true}
	if _, err := g.run(ctx, "worktree", "add", "--quiet", "--detach", "-f", path, commit); err != nil {
		c.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("check out what would land for verify: %w", err)
	}
	for _, e := range w.Exclude {
		src, dst := filepath.Join(w.Path, e), filepath.Join(path, e)
		if _, err := os.Lstat(src); err != nil {
			continue
		}
		if _, err := os.Lstat(dst); err == nil {
			continue // git tracks it: the commit's own is what is verified
		}
		if link, _ := symlinkOnTheWay(path, e); link != "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			c.Remove(context.WithoutCancel(ctx))
			return nil, err
		}
		if err := os.Symlink(src, dst); err != nil {
			c.Remove(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("link %s into the verify checkout: %w", e, err)
		}
	}
	return c, nil
}

// Remove deletes the checkout; what is gone already is not an error.
func (c *VerifyCheckout) Remove(ctx context.Context) error {
	g := git{dir: c.commonDir, writes: true}
	var err error
	if _, serr := os.Lstat(c.Path); serr == nil {
		if _, gerr := g.run(ctx, "worktree", "remove", "--force", "--force", c.Path); gerr != nil {
			err = os.RemoveAll(c.Path)
		}
	}
	g.run(ctx, "worktree", "prune")
	return err
}

// RemoveStaleVerifyCheckouts removes the verify checkouts beside the
// worktree whose land is gone (killed before it could remove its own):
// every landing does, verified or not.
func (w *Worktree) RemoveStaleVerifyCheckouts(ctx context.Context) {
	removeStaleVerifyCheckouts(ctx, w.CommonDir, filepath.Dir(w.Path))
}

// removeStaleVerifyCheckouts removes the verify checkouts under root whose
// land is gone (killed before it could remove its own).
func removeStaleVerifyCheckouts(ctx context.Context, commonDir, root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, verifyPrefix) {
			continue
		}
		pid, err := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		(&VerifyCheckout{Path: filepath.Join(root, name), commonDir: commonDir}).Remove(ctx)
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
