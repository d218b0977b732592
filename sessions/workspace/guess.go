package workspace

import (
	"context"
	"errors"
	"io"
	"sync"
)

// DiffAtRecordedTip writes the diff from base to head, the tip zwarm
// recorded for the worker's branch, if that is still the branch's tip in
// the worker's repository. A settled worker's branch almost always is
// where zwarm left it, and its ref file says so (tipfile.go): the diff is
// then all there is to run. Otherwise the diff is started while git reads
// the tip, not after; its output is held until the tip is known, and
// thrown away if it moved.
//
// done is false when nothing was recorded, when the tip moved, or when
// the diff failed before it wrote anything (a commit missing from your
// repository): the caller then reads the tip the long way, which takes
// the worker's commits into your repository first, and diffs again.
func (w *Worktree) DiffAtRecordedTip(ctx context.Context, out io.Writer, base, head string, o DiffOptions) (done bool, err error) {
	if head == "" {
		return false, nil // nothing recorded to guess
	}
	if w.tipFileHolds(head) {
		c := &countingWriter{w: out}
		err := w.Diff(ctx, c, base, head, o)
		if err != nil && c.n == 0 {
			return false, nil
		}
		return true, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	held := newHeldWriter(out, 1<<20)
	diffed := make(chan error, 1)
	go func() { diffed <- w.Diff(ctx, held, base, head, o) }()
	tip, tipErr := w.ownTip(ctx)
	if tipErr != nil || (tip != head && tip != "") {
		held.drop()
		cancel()
		<-diffed
		return false, nil
	}
	held.release()
	err = <-diffed
	if err != nil && !held.wrote() {
		return false, nil
	}
	return true, errors.Join(err, held.failed())
}

// errDropped ends a held diff whose guess was wrong.
var errDropped = errors.New("diff dropped: the branch moved")

// heldWriter holds what is written to it, up to limit bytes (a writer
// beyond it waits), until release passes it on or drop refuses it.
type heldWriter struct {
	mu      sync.Mutex
	changed *sync.Cond
	out     io.Writer
	buf     []byte
	limit   int
	state   int // holding, released, dropped
	written bool
	err     error // of writing what was held
}

const (
	holding = iota
	released
	dropped
)

func newHeldWriter(out io.Writer, limit int) *heldWriter {
	h := &heldWriter{out: out, limit: limit}
	h.changed = sync.NewCond(&h.mu)
	return h
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.state == holding && len(h.buf)+len(p) > h.limit {
		h.changed.Wait()
	}
	switch h.state {
	case dropped:
		return 0, errDropped
	case holding:
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	if h.err != nil {
		return 0, h.err
	}
	h.written = h.written || len(p) > 0
	return h.out.Write(p)
}

// release writes what is held and lets what follows through.
func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.buf) > 0 {
		h.written = true
		_, h.err = h.out.Write(h.buf)
	}
	h.buf, h.state = nil, released
	h.changed.Broadcast()
}

func (h *heldWriter) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf, h.state = nil, dropped
	h.changed.Broadcast()
}

// failed is the error of writing what was held.
func (h *heldWriter) failed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// wrote reports whether anything reached the output.
func (h *heldWriter) wrote() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.written
}

// countingWriter counts what reaches w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
