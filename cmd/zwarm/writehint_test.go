package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
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

// A follow-up queued while a kill waits for the session's lock (an inject
// that took the lock first) is dropped by that kill, and counted: what
// the kill drops is what was queued when it marked the session.
func TestKillCountsAFollowUpQueuedWhileItWaited(t *testing.T) {
	t.Parallel()
	w, id := blockedWorld(t)
	w.ok("inject", id, "then this")
	release := holdLock(t, filepath.Join(w.State, "sessions", id, ".lock"), "zwarm inject")
	kill := exec.Command(bins.zwarm, "kill", id)
	kill.Dir, kill.Env = w.Work, w.env()
	stderr, err := kill.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := kill.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stderr); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	for line := range lines {
		if strings.Contains(line, "waiting for session") {
			break
		}
	}
	// What an inject does under the lock: the follow-up joins the inbox.
	st, err := state.NewStore(w.State)
	if err != nil {
		t.Fatal(err)
	}
	late := record.InboxEntry{ID: store.NewID(), Seq: 2, Text: "and that", CreatedAt: time.Now().UTC(), State: record.InboxQueued}
	if err := st.WriteInbox(id, &late); err != nil {
		t.Fatal(err)
	}
	release()
	var said []string
	for line := range lines {
		said = append(said, line)
	}
	if err := kill.Wait(); err != nil || !slices.Contains(said, fmt.Sprintf("%s: 2 queued follow-ups dropped, undelivered (zwarm show %s lists them)", id[:8], id[:8])) {
		t.Fatalf("kill: %v\n%s", err, strings.Join(said, "\n"))
	}
	entries, err := st.Inbox(id)
	if err != nil || len(entries) != 2 {
		t.Fatalf("inbox: %v %v", entries, err)
	}
	for _, e := range entries {
		if e.State != record.InboxUndelivered {
			t.Errorf("%q is %s, want undelivered", e.Text, e.State)
		}
	}
}
