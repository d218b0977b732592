package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// transfer copies into your repository the objects of commit that it
// lacks, from the worker's repository, as git fetch does (pack-objects
// there, unpack-objects here), checked as fetch.fsckObjects checks a
// fetch: unpack-objects --strict refuses an object that is not well
// formed, and one that names an object neither received nor already
// yours, and writes nothing then, so what your repository holds stays
// whole. What it leaves out is fetch's own proof of the same, a walk of
// every object your branches reach, which in a large repository costs
// more than the rest of a turn's commit.
//
// What the worker's repository sends is bounded by what your repository
// already has of this worker (its branch and the commits kept for it),
// which pack-objects reads through the worker's repository's alternates.
// The pack goes uncompressed through the pipe: unpack-objects compresses
// each object as your repository's loose objects are (git gc packs them
// later, as it does a fetch's). Loose, a large file costs a checkout what
// it costs when you commit it yourself; a pack kept as it came would
// double a checkout's memory, and compressing it twice doubles the time.
func (w *Worktree) transfer(ctx context.Context, commit string) error {
	haves, err := w.repo().run(ctx, "for-each-ref", "--format=^%(objectname)", "refs/heads/"+w.Branch, keepRefs(w.Branch))
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	packed := make(chan error, 1)
	go func() {
		p := git{dir: w.OwnDir, stdin: strings.NewReader(commit + "\n" + haves), stdout: pw}
		_, err := p.run(ctx, "-c", "pack.compression=0", "pack-objects", "--revs", "--thin", "--stdout", "--delta-base-offset", "--quiet")
		pw.CloseWithError(err) // nil: unpack-objects reads the end of the pack
		packed <- err
	}()
	err = w.unpack(ctx, pr)
	pr.CloseWithError(errors.New("unpack-objects stopped reading")) // pack-objects' writes end, if it still writes
	if perr := <-packed; perr != nil {
		return fmt.Errorf("pack the worker's commit: %w", perr)
	}
	if err != nil {
		return fmt.Errorf("take the worker's pack: %w", err)
	}
	return nil
}

// unpack writes the objects of the pack read from r into your repository,
// each checked, or none (see transfer).
func (w *Worktree) unpack(ctx context.Context, r io.Reader) error {
	_, err := git{dir: w.CommonDir, stdin: r, writes: true}.run(ctx, "unpack-objects", "-q", "--strict")
	return err
}
