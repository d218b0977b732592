package workspace

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A settled worker's diff is started before its tip is read: what it
// writes reaches the output only if the tip is where zwarm recorded it.
func TestADiffOnTheRecordedTipIsShownOnlyIfTheTipIsThere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t, map[string]string{"main.go": "package main\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-0000000000a1")
	base := sh(t, w.Path, "git rev-parse HEAD")
	// Over the held output's limit: a diff that waits for the tip.
	big := strings.Repeat("a line of the worker's generated file\n", 60000)
	head := work(t, w, "gen.txt", big)

	var out bytes.Buffer
	done, err := w.DiffAtRecordedTip(ctx, &out, base, head, DiffOptions{})
	if !done || err != nil || !strings.Contains(out.String(), "+++ b/gen.txt") || out.Len() < len(big) {
		t.Fatalf("at the recorded tip: done %v, %v, %d bytes", done, err, out.Len())
	}
	out.Reset()
	if done, err := w.DiffAtRecordedTip(ctx, &out, base, "", DiffOptions{}); done || err != nil || out.Len() > 0 {
		t.Fatalf("nothing recorded: done %v, %v, %q", done, err, out.String())
	}

	// A commit made by hand moves the tip: nothing of the guess is shown,
	// however much git had written by then.
	write(t, filepath.Join(w.Path, "main.go"), "package main // by hand\n")
	sh(t, w.Path, "git -c user.name=You -c user.email=you@example.com commit -qam 'by hand'")
	start := time.Now()
	done, err = w.DiffAtRecordedTip(ctx, &out, base, head, DiffOptions{})
	if done || err != nil || out.Len() > 0 {
		t.Fatalf("the tip moved: done %v, %v, %d bytes written", done, err, out.Len())
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("a dropped diff took %s", d)
	}

	// The hand commit is the tip, but your repository lacks it (it was
	// never followed): git fails before it writes, and the caller is told
	// to take the long way.
	hand := sh(t, w.Path, "git rev-parse HEAD")
	done, err = w.DiffAtRecordedTip(ctx, &out, base, hand, DiffOptions{Format: StatOnly})
	if done || err != nil || out.Len() > 0 {
		t.Fatalf("a tip your repository lacks: done %v, %v, %q", done, err, out.String())
	}
}

// What is held waits for the guess; a writer over the limit waits too,
// and a dropped guess refuses it.
func TestAHeldWriterPassesNothingOnUntilReleased(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	h := newHeldWriter(&out, 4)
	h.Write([]byte("abc"))
	wrote := make(chan error, 1)
	go func() { _, err := h.Write([]byte("defg")); wrote <- err }()
	select {
	case err := <-wrote:
		t.Fatalf("a write over the limit returned (%v) before the release", err)
	case <-time.After(50 * time.Millisecond):
	}
	if out.Len() > 0 || h.wrote() {
		t.Fatalf("held output reached the writer: %q", out.String())
	}
	h.release()
	if err := <-wrote; err != nil || out.String() != "abcdefg" || !h.wrote() {
		t.Fatalf("after the release: %v, %q", err, out.String())
	}

	d := newHeldWriter(&bytes.Buffer{}, 4)
	d.Write([]byte("abc"))
	go func() { _, err := d.Write([]byte("defg")); wrote <- err }()
	d.drop()
	if err := <-wrote; err != errDropped || d.wrote() {
		t.Fatalf("a write to a dropped guess: %v", err)
	}
}
