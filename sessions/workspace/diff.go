package workspace

import (
	"context"
	"fmt"
	"io"
)

// DiffFormat is what a diff shows.
type DiffFormat int

const (
	// Patch is the full diff.
	Patch DiffFormat = iota
	// StatOnly is a diffstat (git diff --stat).
	StatOnly
	// NamesOnly lists the changed files.
	NamesOnly
	// Numbers is git diff --numstat: added, deleted, path per line.
	Numbers
)

// DiffOptions say how to print a diff.
type DiffOptions struct {
	Format DiffFormat
	// Color makes git colour it (for a terminal).
	Color bool
	// Width is the terminal's width, for --stat.
	Width int
	// Binary makes a patch of binary files too (git diff --binary), so
	// that git apply takes the whole change; for a patch piped on, not for
	// a person or a model to read.
	Binary bool
}

func (o DiffOptions) args() []string {
	args := []string{"diff", "--no-ext-diff", "--no-textconv"}
	if o.Color {
		args = append(args, "--color=always")
	} else {
		args = append(args, "--no-color")
	}
	switch o.Format {
	case StatOnly:
		if o.Width > 0 {
			args = append(args, fmt.Sprintf("--stat=%d", o.Width))
		} else {
			args = append(args, "--stat")
		}
		args = append(args, "--summary")
	case NamesOnly:
		args = append(args, "--name-only")
	case Numbers:
		args = append(args, "--numstat")
	case Patch:
		if o.Binary {
			args = append(args, "--binary")
		}
	}
	return args
}

// Diff writes the change between two commits to out, as git prints it.
func (w *Worktree) Diff(ctx context.Context, out io.Writer, from, to string, o DiffOptions) error {
	g := w.repo()
	g.stdout = out
	_, err := g.run(ctx, append(o.args(), from, to, "--")...)
	return err
}

// WorkingDiff writes what changed from a commit to the worktree as it is
// now, uncommitted and untracked files included (not what was brought
// along), to out. It stages into a copy of the worktree's index, so the
// worker's own index and files are never touched, even while it runs.
func (w *Worktree) WorkingDiff(ctx context.Context, out io.Writer, from string, o DiffOptions) error {
	if !w.Exists() {
		return fmt.Errorf("worktree %s is gone", w.Path)
	}
	idx, cleanup, err := tempIndex(w.admin())
	if err != nil {
		return err
	}
	defer cleanup()
	g := w.tree()
	g.env = append(g.env, tempIndexEnv(idx)...)
	if err := w.add(ctx, g); err != nil {
		return fmt.Errorf("read the worktree: %w", err)
	}
	g.stdout = out
	_, err = g.run(ctx, append(o.args(), "--cached", from, "--")...)
	return err
}

// WorkingChanges is WorkingDiff as numbers: what changed from a commit
// to the worktree as it is, file by file, and the sum.
func (w *Worktree) WorkingChanges(ctx context.Context, from string) ([]FileStat, Stat, error) {
	if !w.Exists() {
		return nil, Stat{}, fmt.Errorf("worktree %s is gone", w.Path)
	}
	idx, cleanup, err := tempIndex(w.admin())
	if err != nil {
		return nil, Stat{}, err
	}
	defer cleanup()
	g := w.tree()
	g.env = append(g.env, tempIndexEnv(idx)...)
	if err := w.add(ctx, g); err != nil {
		return nil, Stat{}, fmt.Errorf("read the worktree: %w", err)
	}
	out, err := g.run(ctx, append(numstat, "--cached", from, "--")...)
	if err != nil {
		return nil, Stat{}, err
	}
	return parseNumstat(out)
}

// Snapshot is a commit of the worktree as the turn's commit would make it
// (everything uncommitted, untracked files included, what was brought
// along and zwarm's state dir aside) on top of its HEAD, made through a
// copy of its index: no ref moves and the worker's index and files are
// never touched. It returns HEAD itself when nothing is uncommitted. A
// dry run of a landing measures exactly what the landing will commit.
func (w *Worktree) Snapshot(ctx context.Context) (string, error) {
	if !w.Exists() {
		return "", fmt.Errorf("worktree %s is gone", w.Path)
	}
	idx, cleanup, err := tempIndex(w.admin())
	if err != nil {
		return "", err
	}
	defer cleanup()
	g := w.tree()
	g.env = append(g.env, tempIndexEnv(idx)...)
	g.writes, g.zwarm = true, true
	if err := w.add(ctx, g); err != nil {
		return "", fmt.Errorf("read the worktree: %w", err)
	}
	head, err := w.Head(ctx)
	if err != nil {
		return "", err
	}
	snap, err := commitIndex(ctx, g, head, "zwarm: what the worktree holds, uncommitted")
	if err != nil {
		return "", err
	}
	return snap, w.bring(ctx, snap)
}
