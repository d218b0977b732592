package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/zwarm/zwarm/sessions/runner"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// A session polled (its supervisor runs under another runner, whose
// writes may raise no inotify event here) is looked at again every
// JobPoll with no file event at all, and no longer once it is dropped.
func TestPolledSessionsAreLookedAtWithoutEvents(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st, err := state.NewStore(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(st.SessionsDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	cs, err := newChangeSource(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.close()
	id := store.NewID()
	cs.poll(id, true)
	for round := 0; round < 3; round++ {
		select {
		case <-cs.wake():
		case <-time.After(time.Minute):
			t.Fatalf("round %d: a polled session was not looked at again within a minute; want a wake every %s", round, runner.JobPoll)
		}
		if got := cs.take(); !slices.Contains(got, id) {
			t.Fatalf("round %d: woken for %v, not the polled session", round, got)
		}
	}
	cs.poll(id, false)
	cs.mu.Lock()
	left := len(cs.polled)
	cs.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d sessions still polled after the last was dropped", left)
	}
}

// Without an inotify instance to be had (the user's are used up: 128 for
// every program), a change source still sees changes, by looking at
// everything every pollEvery, and closes: a wait failed outright, exit 1,
// as if its session had.
func TestNoInotifyLeftIsPolled(t *testing.T) {
	// Not parallel: it changes newWatcher for the package.
	newWatcher = func() (*fsnotify.Watcher, error) {
		return nil, fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE)
	}
	defer func() { newWatcher = fsnotify.NewWatcher }()
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(st.SessionsDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	cs, err := newChangeSource(st, nil)
	if err != nil {
		t.Fatalf("without inotify: %v", err)
	}
	for round := 0; round < 2; round++ {
		select {
		case <-cs.wake():
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: not woken within 10 s; want a look at everything every %s", round, pollEvery)
		}
		if !cs.takeResync() {
			t.Fatalf("round %d: woken, but not to look at everything", round)
		}
	}
	closed := make(chan struct{})
	go func() { cs.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("close did not return")
	}
}
