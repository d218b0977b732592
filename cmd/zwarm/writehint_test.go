package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// Every command that writes a session says what to do when the state dir
// refuses the write, wherever the write comes (a record saved, a reserve
// made, a directory renamed away), as spawn always did: not only the
// system's "read-only file system". A refusal of a path outside the state
// dir is not the state dir's, and is left as it is.
func TestAStateDirThatRefusesWritesSaysWhatToDo(t *testing.T) {
	w := newWorld(t)
	id := w.spawn("first")
	w.ok("wait", id)
	ro := sessionstest.ReadOnlyView(t, w.State)
	hint := "(zwarm cannot write its state dir " + ro + ": fix its permissions, or choose another with --state-dir)"
	for _, args := range [][]string{
		{"inject", id, "then this"},
		{"rm", id},
		{"rm", "--force", id},
		{"clean", "--yes", "--older-than", "0s"},
	} {
		r := w.zwarm(append([]string{"--state-dir", ro}, args...)...)
		if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "read-only file system") || !strings.HasSuffix(strings.TrimSpace(r.stderr), hint) {
			t.Errorf("%q: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	// spawn says so in its own words, once.
	if r := w.zwarm("--state-dir", ro, "spawn", "more"); r.code != cli.ExitFailure || strings.Count(r.stderr, "--state-dir") != 1 {
		t.Errorf("spawn: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := w.zwarm("show", id); r.code != 0 || !strings.Contains(r.stdout, "completed") {
		t.Fatalf("the session after: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The hint is for a path in the state dir: a repository, an agent's
// binary or a file beside the state dir is not the state dir's to fix.
func TestWriteHintIsTheStateDirsOnly(t *testing.T) {
	f := &factory{chosen: &stateDirChoice{"/srv/state", "--state-dir"}}
	in := &os.PathError{Op: "open", Path: "/srv/state/sessions/x/meta.json", Err: unix.EROFS}
	if err := f.withWriteHint(in); !strings.HasSuffix(err.Error(), "or choose another with --state-dir)") || !errors.Is(err, unix.EROFS) {
		t.Fatalf("in the state dir: %v", err)
	}
	for _, err := range []error{
		&os.PathError{Op: "open", Path: "/srv/statefile", Err: unix.EROFS},
		&os.PathError{Op: "fork/exec", Path: "/usr/bin/codex", Err: unix.EACCES},
		&os.LinkError{Op: "rename", Old: "/srv/state/a", New: "/repo/b", Err: unix.EROFS},
		&os.PathError{Op: "open", Path: "/srv/state/x", Err: unix.ENOENT},
		os.ErrPermission,
	} {
		if got := f.withWriteHint(err); got != err {
			t.Errorf("%v became %v", err, got)
		}
	}
}

// A kill that drops queued follow-ups says so: they were left for show
// to tell, undelivered.
func TestKillSaysWhichFollowUpsItDropped(t *testing.T) {
	t.Parallel()
	w, id := blockedWorld(t)
	w.ok("inject", id, "then this")
	w.ok("inject", id, "and that")
	r := w.zwarm("kill", id)
	if r.code != 0 || !strings.Contains(r.stderr, "2 queued follow-ups dropped, undelivered (zwarm show "+id[:8]+" lists them)") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
