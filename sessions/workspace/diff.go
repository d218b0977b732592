package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
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
	// Width is the terminal's width, for --stat.
	Width int
	// Binary makes a patch of binary files too (git diff --binary), so
	// that git apply takes the whole change; for a patch piped on, not for
	// a person or a model to read.
	Binary bool
	// Paths limits the diff to these paths (from the repository's top),
	// each taken literally: none is a pathspec's magic.
	Paths []string
}

// pathspecs are o.Paths as git takes them after "--".
func (o DiffOptions) pathspecs() []string {
	out := make([]string, len(o.Paths))
	for i, p := range o.Paths {
		out[i] = ":(top,literal)" + p
	}
	return out
}

func (o DiffOptions) args() []string {
	// Never coloured by git: its colour codes could not be told from those
	// in a worker's files (render.DiffPainter colours it for a terminal).
	args := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color"}
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
	_, err := g.run(ctx, append(append(o.args(), from, to, "--"), o.pathspecs()...)...)
	return err
}

// WorkingDiff writes what changed from a commit to the worktree as it is
// now, uncommitted and untracked files included (not what was brought
// along), to out. It reads the worktree through a copy of its index, so
// the worker's own index and files are never touched, even while it runs.
func (w *Worktree) WorkingDiff(ctx context.Context, out io.Writer, from string, o DiffOptions) error {
	// A worker that runs may have made a FIFO where git opens a file by
	// name: git would wait on it for good, and whoever asked with it.
	ctx, cancel := context.WithTimeout(ctx, workingLimit)
	defer cancel()
	g, args, cleanup, err := w.working(ctx, from, time.Now())
	if err == nil {
		defer cleanup()
		g.stdout = out
		_, err = g.run(ctx, append(append(o.args(), args...), o.pathspecs()...)...)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return w.waitedOn(err)
	}
	return err
}

// workingLimit bounds a read of a worktree as it is, many times what one
// takes in a repository of a million files.
var workingLimit = 2 * time.Minute

// WorkingChanges is WorkingDiff as numbers: what changed from a commit
// to the worktree as it is, file by file, and the sum.
func (w *Worktree) WorkingChanges(ctx context.Context, from string) ([]FileStat, Stat, error) {
	g, args, cleanup, err := w.working(ctx, from, time.Now())
	if err != nil {
		return nil, Stat{}, err
	}
	defer cleanup()
	out, err := g.run(ctx, append(append([]string(nil), numstat...), args...)...)
	if err != nil {
		return nil, Stat{}, err
	}
	return parseNumstat(out)
}

// working readies git, on a copy of the worktree's index, for a diff of
// the worktree as it is from a commit, and returns the arguments that
// follow the diff's options. Where the worktree's last scan still holds
// (scan.go), its untracked files are added to the copy as intended and
// git diffs the files against the commit: one walk of the tracked files,
// as git diff makes. Otherwise everything is staged in the copy (as the
// turn's commit stages it), and git diffs the copy. began is now, or a
// moment before.
func (w *Worktree) working(ctx context.Context, from string, began time.Time) (git, []string, func(), error) {
	if !w.Exists() {
		return git{}, nil, nil, fmt.Errorf("worktree %s is gone", w.Path)
	}
	g, cleanup, err := w.onIndexCopy()
	if err != nil {
		return git{}, nil, nil, err
	}
	if s := w.recall(); s != nil {
		err := s.intend(ctx, g)
		if err == nil {
			// No pathspec: a scan is kept only of an index that tracks
			// nothing the exclusions leave out, and the untracked files
			// were added with them. git diff refreshes what it reads
			// whatever the user's config says, as git status does.
			g.config = append(g.config, "diff.autoRefreshIndex=true")
			return g, []string{from, "--"}, cleanup, nil
		}
		cleanup()
		if ctx.Err() != nil {
			return git{}, nil, nil, err
		}
		// The copy may hold part of what failed: start again from the
		// worktree's own, and walk.
		forget(w.Path)
		if g, cleanup, err = w.onIndexCopy(); err != nil {
			return git{}, nil, nil, err
		}
	}
	if err := w.add(ctx, g, began); err != nil {
		cleanup()
		return git{}, nil, nil, fmt.Errorf("read the worktree: %w", err)
	}
	return g, []string{"--cached", from, "--"}, cleanup, nil
}

// onIndexCopy is git in the worktree on a copy of its index, and what
// removes the copy.
func (w *Worktree) onIndexCopy() (git, func(), error) {
	idx, cleanup, err := tempIndex(w.admin())
	if err != nil {
		return git{}, nil, err
	}
	g := w.tree()
	g.env = append(g.env, tempIndexEnv(idx)...)
	return g, cleanup, nil
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
	g, cleanup, err := w.onIndexCopy()
	if err != nil {
		return "", err
	}
	defer cleanup()
	g.writes, g.zwarm = true, true
	// What the worker left that git waits on is removed by the landing's
	// commit, not here: the read is bounded instead.
	actx, cancel := context.WithTimeout(ctx, workingLimit)
	defer cancel()
	if err := w.add(actx, g, time.Time{}); err != nil {
		if errors.Is(actx.Err(), context.DeadlineExceeded) {
			return "", w.waitedOn(err)
		}
		return "", fmt.Errorf("read the worktree: %w", err)
	}
	head, err := w.Head(ctx)
	if err != nil {
		return "", err
	}
	snap, _, err := commitIndex(ctx, g, head, "zwarm: what the worktree holds, uncommitted")
	if err != nil {
		return "", err
	}
	return snap, w.bring(ctx, snap, false)
}
