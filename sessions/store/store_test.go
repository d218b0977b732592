package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWriteFileAtomicNeverThroughASymlink(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "sessions", "a", "meta.json")
	if err := os.MkdirAll(filepath.Dir(path), DirPerm); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(root, path, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != FilePerm {
		t.Fatalf("written file: %v, %v; want mode %o", fi, err, FilePerm)
	}

	// A symlink at the file, and one at a directory between root and it.
	elsewhere := t.TempDir()
	os.Remove(path)
	if err := os.Symlink(filepath.Join(elsewhere, "x"), path); err != nil {
		t.Fatal(err)
	}
	var se *SymlinkError
	if err := WriteFileAtomic(root, path, []byte("two\n")); !errors.As(err, &se) || se.Path != path {
		t.Fatalf("write over a symlink: %v; want a SymlinkError naming it", err)
	}
	linked := filepath.Join(root, "sessions", "b")
	if err := os.Symlink(elsewhere, linked); err != nil {
		t.Fatal(err)
	}
	for _, try := range []func() error{
		func() error { return WriteFileAtomic(root, filepath.Join(linked, "meta.json"), nil) },
		func() error {
			_, err := OpenFile(root, filepath.Join(linked, "meta.json"), os.O_WRONLY|os.O_CREATE, FilePerm)
			return err
		},
	} {
		if err := try(); !errors.As(err, &se) || se.Path != linked {
			t.Fatalf("through a symlinked directory: %v; want a SymlinkError naming %s", err, linked)
		}
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("something was written where the symlinks point: %v", ents)
	}
}

// eachScheme runs f under each lock scheme, forced as ZWARM_LOCKS forces
// it: the lease scheme on this local file system is the test of it.
func eachScheme(t *testing.T, f func(t *testing.T, s Scheme)) {
	for _, s := range []Scheme{SchemeFlock, SchemeLease} {
		t.Run(string(s), func(t *testing.T) {
			t.Setenv(LocksEnv, string(s))
			f(t, s)
		})
	}
}

func TestALockTimesOutNamingItsHolder(t *testing.T) {
	eachScheme(t, func(t *testing.T, s Scheme) {
		root := t.TempDir()
		path := filepath.Join(root, ".lock")
		held, err := LockFile(context.Background(), root, path, "session 1a2b")
		if err != nil {
			t.Fatal(err)
		}
		var heard []LockWait
		ctx := WithLockPolicy(context.Background(), LockPolicy{Timeout: 30 * time.Millisecond, Notify: func(w LockWait) { heard = append(heard, w) }})
		began := time.Now()
		_, err = LockFile(ctx, root, path, "session 1a2b")
		waited := time.Since(began)
		var te *LockTimeoutError
		if !errors.As(err, &te) || !errors.Is(err, ErrLockTimeout) {
			t.Fatalf("a held lock: %v; want a LockTimeoutError", err)
		}
		if te.Holder.PID != os.Getpid() || te.Holder.Host != "" || te.After != 30*time.Millisecond {
			t.Fatalf("timeout %+v; want this process (%d) after 30ms", te, os.Getpid())
		}
		want := "session 1a2b is still locked by pid " + strconv.Itoa(os.Getpid())
		if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "raise lock_timeout in config.toml") {
			t.Fatalf("message %q", err)
		}
		// A wait of 30 ms says nothing; one that a stalled machine made
		// last a second by the clock may say what it waits for.
		if len(heard) != 0 && waited < lockNoticeAfter {
			t.Fatalf("told of a wait of %s, shorter than a second: %v; want no notice", waited, heard)
		}
		held.Unlock()
		b, err := os.ReadFile(path)
		switch s {
		case SchemeFlock:
			// The file stays, its note emptied.
			if err != nil || len(b) != 0 {
				t.Fatalf("after the flock: %q, %v; want an empty file", b, err)
			}
		case SchemeLease:
			if !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the lease lock file outlived the lock: %q, %v", b, err)
			}
		}
		l, err := LockFile(ctx, root, path, "session 1a2b")
		if err != nil {
			t.Fatalf("a free lock: %v", err)
		}
		l.Unlock()
		if ents, _ := os.ReadDir(root); s == SchemeLease && len(ents) != 0 {
			t.Fatalf("left in the directory: %v", ents)
		}
	})
}

// Writers advance the generation one at a time, under its lock; a reader
// never waits, and a writer in the middle of its change is never read as
// done. Under flock a reader holds off writers while it trusts its cache;
// under leases it holds nothing (a reader killed would hold them off for
// a lease) and a writer that comes after it bumps past what it read.
func TestGenerationAdvancesUnderItsLock(t *testing.T) {
	eachScheme(t, func(t *testing.T, s Scheme) {
		root := t.TempDir()
		path := filepath.Join(root, "sessions.gen")
		gen, unlock, ok := Generation(root, path)
		if !ok || gen != 0 {
			t.Fatalf("a new generation: %d, %v", gen, ok)
		}
		_, unlock2, ok2 := Generation(root, path)
		unlock2()
		if !ok2 {
			t.Fatal("a second reader at once was refused")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		ran := false
		err := BumpGeneration(ctx, root, path, "the session list", func() error { ran = true; return nil })
		switch s {
		case SchemeFlock: // the reader holds it: the writer waits, here no longer than its context
			if !errors.Is(err, context.DeadlineExceeded) || ran {
				t.Fatalf("bump under a reader: %v, ran %v", err, ran)
			}
		case SchemeLease:
			if err != nil || !ran {
				t.Fatalf("bump beside a reader: %v, ran %v", err, ran)
			}
		}
		unlock()
		for i := 0; i < 2; i++ {
			if err := BumpGeneration(context.Background(), root, path, "the session list", func() error { ran = true; return nil }); err != nil || !ran {
				t.Fatalf("bump: %v, ran %v", err, ran)
			}
		}
		want := uint64(2)
		if s == SchemeLease {
			want = 3
		}
		gen, unlock, ok = Generation(root, path)
		unlock()
		if !ok || gen != want {
			t.Fatalf("after the bumps: %d, %v; want %d", gen, ok, want)
		}
		// While a writer is in the middle of its change, a reader is told
		// there is no generation to trust.
		inside, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- BumpGeneration(context.Background(), root, path, "the session list", func() error { close(inside); <-release; return nil })
		}()
		<-inside
		_, unlock, ok = Generation(root, path)
		unlock()
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Fatal("a reader trusted the generation while a writer changed what it guards")
		}
		gen, unlock, ok = Generation(root, path)
		unlock()
		if !ok || gen != want+1 {
			t.Fatalf("after the writer: %d, %v", gen, ok)
		}
	})
}

func TestASessionDirectoryIsMadeAndRemovedWhole(t *testing.T) {
	l := Layout{Dir: t.TempDir()}
	if ids, err := l.SessionIDs(); err != nil || len(ids) != 0 {
		t.Fatalf("no sessions dir: %v, %v", ids, err)
	}
	if err := l.Prepare(); err != nil {
		t.Fatal(err)
	}
	id := NewID()
	if err := l.CreateSession(id, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{l.Meta(id), l.Turns(id), l.Inbox(id), l.Reserve(id)} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("a new session lacks %s: %v", p, err)
		}
	}
	if got, err := l.ResolveSession(ShortID(id)); err != nil || got != id {
		t.Fatalf("resolve %s: %q, %v", ShortID(id), got, err)
	}
	if _, err := l.ResolveSession("../x"); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("resolve ../x: %v", err)
	}
	if err := l.RemoveSession(context.Background(), id, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.LockSession(context.Background(), id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("lock a removed session: %v", err)
	}
	if ents, _ := os.ReadDir(l.Sessions()); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

// A whole id is found by its directory alone, a prefix among the names of
// the sessions dir; what is not a session directory is no session.
func TestResolveSessionByIDOrPrefix(t *testing.T) {
	l := Layout{Dir: t.TempDir()}
	if _, err := l.ResolveSession("3f2a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no sessions dir: %v", err)
	}
	if err := l.Prepare(); err != nil {
		t.Fatal(err)
	}
	a, b := "3f2a0001-0000-4000-8000-000000000001", "3f2a0002-0000-4000-8000-000000000002"
	for _, id := range []string{a, b} {
		if err := l.CreateSession(id, []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
	}
	file := "3f2b0003-0000-4000-8000-000000000003" // a file, not a session
	if err := os.WriteFile(filepath.Join(l.Sessions(), file), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{a, a, nil},
		{" " + strings.ToUpper(b) + " ", b, nil},
		{"3f2a0001", a, nil},
		{"3f2a", "", nil}, // ambiguous
		{file, "", ErrNotFound},
		{"3f2b", "", ErrNotFound},
		{"3f2a0009-0000-4000-8000-000000000001", "", ErrNotFound},
		{"../x", "", ErrInvalidID},
	} {
		got, err := l.ResolveSession(tc.in)
		var amb *AmbiguousError
		switch {
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%q: %q, %v; want %s", tc.in, got, err, tc.want)
		case tc.want == "" && tc.err == nil && !errors.As(err, &amb):
			t.Errorf("%q: %q, %v; want ambiguous", tc.in, got, err)
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("%q: %q, %v; want %v", tc.in, got, err, tc.err)
		}
	}
}

// PeekGeneration reads the counter BumpGeneration advances, and cannot
// say while a bump holds it: the change may be half made.
func TestPeekGeneration(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.gen")
	if _, ok := PeekGeneration(dir, path); ok {
		t.Fatal("a generation read where there is no file")
	}
	for want := uint64(1); want <= 2; want++ {
		var during bool
		err := BumpGeneration(context.Background(), dir, path, "test", func() error {
			_, during = PeekGeneration(dir, path)
			return nil
		})
		if err != nil || during {
			t.Fatalf("bump: %v; read during it: %v", err, during)
		}
		if gen, ok := PeekGeneration(dir, path); !ok || gen != want {
			t.Fatalf("after bump %d: %d %v", want, gen, ok)
		}
	}
}
