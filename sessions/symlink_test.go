package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// plantedTarget is a file outside the state dir that a planted symlink
// points at; it must come through every write untouched.
type plantedTarget struct {
	t    *testing.T
	path string
}

const precious = "not zwarm's to write\n"

func newTarget(t *testing.T) *plantedTarget {
	t.Helper()
	p := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(p, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	return &plantedTarget{t: t, path: p}
}

// plant replaces at with a symlink to the target.
func (pt *plantedTarget) plant(at string) {
	pt.t.Helper()
	os.RemoveAll(at)
	if err := os.Symlink(pt.path, at); err != nil {
		pt.t.Fatal(err)
	}
}

func (pt *plantedTarget) untouched(what string) {
	pt.t.Helper()
	if b, err := os.ReadFile(pt.path); err != nil || string(b) != precious {
		pt.t.Errorf("%s wrote through the symlink: %.40q (%d bytes), %v", what, b, len(b), err)
	}
}

// refused says err is the symlink error naming path.
func refused(t *testing.T, what string, err error, path string) {
	t.Helper()
	var se *state.SymlinkError
	if !errors.As(err, &se) || se.Path != path {
		t.Errorf("%s: want the symlink %s named, got %v", what, path, err)
	}
}

// A symlink where a file of a session should be is never written through:
// each writer refuses it and names it.
func TestNoWriteFollowsASymlinkInTheStateDir(t *testing.T) {
	w := newWorld(t)
	s := w.spawn("fine")
	w.wait(s.ID)
	id := s.ID
	target := newTarget(t)

	turn := w.Store.TurnPath(id, 7)
	target.plant(turn)
	_, _, err := w.Store.TurnFiles(id, 7)
	refused(t, "turn file", err, turn)
	target.untouched("a turn file")

	stderr := w.Store.StderrPath(id, 8)
	target.plant(stderr)
	_, _, err = w.Store.TurnFiles(id, 8)
	refused(t, "turn stderr file", err, stderr)
	target.untouched("a turn's stderr file")

	meta := w.Store.MetaPath(id)
	saved, _ := os.ReadFile(meta)
	target.plant(meta)
	refused(t, "meta.json", w.Store.Save(s), meta)
	target.untouched("meta.json")
	os.Remove(meta)
	os.WriteFile(meta, saved, 0o600)

	e := &record.InboxEntry{ID: store.NewID(), Seq: 9, Text: "x", CreatedAt: time.Now(), State: record.InboxQueued}
	entry := w.Store.InboxPath(id, e)
	target.plant(entry)
	refused(t, "inbox entry", w.Store.WriteInbox(id, e), entry)
	target.untouched("an inbox entry")

	lock := w.Store.LockPath(id)
	target.plant(lock)
	_, err = w.Store.Lock(id)
	refused(t, "lock", err, lock)
	target.untouched("the session's lock")

	reserve := w.Store.ReservePath(id)
	target.plant(reserve)
	refused(t, "reserve", state.WriteReserve(reserve), reserve)
	target.untouched("the space reserve")

	log := w.Store.SupervisorLog(id)
	target.plant(log)
	_, err = state.OpenAppend(w.Store.Dir(), log)
	refused(t, "supervisor log", err, log)
	target.untouched("the supervisor's log")

	index := listing.IndexPath(w.Store)
	target.plant(index)
	// A listing that finds the sessions dir changed writes the cache.
	w.Manager.List(context.Background(), listing.Options{})
	target.untouched("the index")
	refused(t, "index", w.Store.WriteFileAtomic(index, []byte("x")), index)

	gen := w.Store.GenPath()
	target.plant(gen)
	_, err = w.Store.OpenFile(gen, os.O_RDWR|os.O_CREATE)
	refused(t, "sessions.gen", err, gen)
	w.Store.BumpGeneration(context.Background(), func() error { return nil })
	target.untouched("sessions.gen")
}

// A directory of the state dir swapped for a symlink takes no file
// elsewhere: the directory is named.
func TestNoWriteGoesThroughASymlinkedDirectory(t *testing.T) {
	w := newWorld(t)
	s := w.spawn("fine")
	w.wait(s.ID)
	id := s.ID
	outside := t.TempDir()

	for _, c := range []struct {
		what  string
		dir   string
		write func() error
	}{
		{"turns", w.Store.TurnsDir(id), func() error { _, _, err := w.Store.TurnFiles(id, 5); return err }},
		{"inbox", w.Store.InboxDir(id), func() error {
			return w.Store.WriteInbox(id, &record.InboxEntry{ID: store.NewID(), Seq: 5, Text: "x", CreatedAt: time.Now(), State: record.InboxQueued})
		}},
		{"session dir", w.Store.SessionDir(id), func() error { return w.Store.Save(s) }},
	} {
		moved := c.dir + ".real"
		if err := os.Rename(c.dir, moved); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, c.dir); err != nil {
			t.Fatal(err)
		}
		refused(t, c.what, c.write(), c.dir)
		if ents, _ := os.ReadDir(outside); len(ents) > 0 {
			t.Errorf("%s: wrote %s outside the state dir", c.what, ents[0].Name())
		}
		os.Remove(c.dir)
		os.Rename(moved, c.dir)
	}
}

// The state dir itself may be a symlink (where it lives is the user's
// choice); only what is inside it is zwarm's.
func TestAStateDirReachedThroughASymlinkIsUsed(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "state")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(link, "logs", "zwarm.log")
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := state.OpenAppend(link, path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := os.Stat(filepath.Join(real, "logs", "zwarm.log")); err != nil {
		t.Fatal(err)
	}
}

// sessions/ swapped for a symlink: a spawn makes nothing where it points.
func TestSpawnRefusesASymlinkedSessionsDir(t *testing.T) {
	w := newWorld(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, w.Store.SessionsDir()); err != nil {
		t.Fatal(err)
	}
	_, err := w.Manager.Spawn(context.Background(), sessions.SpawnRequest{Task: "x", Adapter: "fake", WorkingDir: w.Work})
	refused(t, "spawn", err, w.Store.SessionsDir())
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("spawn made %s where sessions/ points", ents[0].Name())
	}
}
