package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
	"golang.org/x/sys/unix"
)

// Store is the state directory on disk. doc.go describes its layout. Where
// each file is, how it is written and locked, and what an id may be are
// package store's; a Store reads and writes the session records in it.
type Store struct {
	dir string
}

// NewStore returns the store rooted at dir. Nothing is created until the
// first write, so read-only commands work on a read-only tree.
func NewStore(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	return &Store{dir: abs}, nil
}

// Dir is the absolute state directory.
func (st *Store) Dir() string { return st.dir }

// files is where the store keeps each file (package store).
func (st *Store) files() store.Layout { return store.Layout{Dir: st.dir} }

func (st *Store) sessionsDir() string                 { return st.files().Sessions() }
func (st *Store) sessionDir(id string) string         { return st.files().Session(id) }
func (st *Store) metaPath(id string) string           { return st.files().Meta(id) }
func (st *Store) lockPath(id string) string           { return st.files().Lock(id) }
func (st *Store) inboxDir(id string) string           { return st.files().Inbox(id) }
func (st *Store) logPath(id string) string            { return st.files().SupervisorLog(id) }
func (st *Store) turnsDir(id string) string           { return st.files().Turns(id) }
func (st *Store) cgroupFile(id string) string         { return st.files().Cgroup(id) }
func (st *Store) reservePath(id string) string        { return st.files().Reserve(id) }
func (st *Store) supervisorLockPath(id string) string { return st.files().SupervisorLock(id) }

// TurnPath is the raw stdout of turn n (1-based).
func (st *Store) TurnPath(id string, n int) string { return st.files().Turn(id, n) }

// StderrPath is the raw stderr of turn n.
func (st *Store) StderrPath(id string, n int) string { return st.files().Stderr(id, n) }

// SetupLog is what making the session's worktree did and printed: git,
// what was brought along, the setup command's output.
func (st *Store) SetupLog(id string) string { return st.files().SetupLog(id) }

// SupervisorLog is the supervisor's own diagnostics for a session.
func (st *Store) SupervisorLog(id string) string { return st.logPath(id) }

// Prepare makes the state dir, ready for sessions (what the first
// command that writes does; zwarm init does it up front).
func (st *Store) Prepare() error { return st.ensureWritable() }

// checkUsable refuses, creating nothing, a state dir that can never be
// made: a file in the way of it or of one of its parents.
func (st *Store) checkUsable() error { return st.files().CheckUsable() }

// ensureWritable creates the sessions directory and proves it can be
// written, so that a read-only state dir fails before anything starts.
func (st *Store) ensureWritable() error { return st.files().Prepare() }

// IgnoreFile is the state dir's own .gitignore (store.IgnoreFile).
const IgnoreFile = store.IgnoreFile

// create makes a new session's directories and writes its first record,
// whole or not at all (store.Layout.CreateSession).
func (st *Store) create(s *record.Session) error {
	if err := st.ensureWritable(); err != nil {
		return err
	}
	data, err := st.encode(s)
	if err == nil {
		err = st.files().CreateSession(s.ID, data)
	}
	if err != nil {
		return fmt.Errorf("create session %s in %s: %w%s", ShortID(s.ID), st.dir, err, noSpaceHint(err))
	}
	return nil
}

func writeReserve(path string) error { return store.WriteReserve(path) }

// noSpaceHint says what to do about a full disk.
func noSpaceHint(err error) string {
	if IsNoSpace(err) {
		return " (free some space on that disk, or choose another state dir with --state-dir)"
	}
	return ""
}

// IsNoSpace reports a full disk or quota.
func IsNoSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}

// save replaces meta.json atomically.
func (st *Store) save(s *record.Session) error {
	data, err := st.encode(s)
	if err != nil {
		return err
	}
	if err := st.writeFileAtomic(st.metaPath(s.ID), data); err != nil {
		return fmt.Errorf("save session %s: %w", s.ID, err)
	}
	return nil
}

func (st *Store) encode(s *record.Session) ([]byte, error) {
	if s.Legacy {
		return nil, fmt.Errorf("session %s was written by the Python zwarm and is read-only", s.ID)
	}
	s.Version = record.SchemaVersion
	s.UpdatedAt = time.Now().UTC()
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode session %s: %w", s.ID, err)
	}
	return append(data, '\n'), nil
}

// load reads a session record as it is on disk.
func (st *Store) load(id string) (*record.Session, error) {
	data, err := os.ReadFile(st.metaPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		if st.recordMissing(id) {
			return nil, st.noRecordError(id)
		}
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, &RecordError{ID: id, Err: err}
	}
	return decodeSession(st.metaPath(id), id, data)
}

// update changes a session under its lock: the change sees the latest record
// and no other writer (supervisor, inject, kill) interleaves with it.
func (st *Store) update(id string, fn func(*record.Session) error) (*record.Session, error) {
	return st.change(id, fn, false)
}

// record is update for an outcome (a turn's end, a kill, a dead owner): on
// a full disk it gives back the session's reserve and tries once more, so
// the outcome and its reason reach the record.
func (st *Store) record(id string, fn func(*record.Session) error) (*record.Session, error) {
	return st.change(id, fn, true)
}

func (st *Store) change(id string, fn func(*record.Session) error, outcome bool) (*record.Session, error) {
	return st.changeCtx(context.Background(), id, fn, outcome)
}

// updateCtx is update that gives up waiting for the lock when ctx ends.
func (st *Store) updateCtx(ctx context.Context, id string, fn func(*record.Session) error) (*record.Session, error) {
	return st.changeCtx(ctx, id, fn, false)
}

func (st *Store) changeCtx(ctx context.Context, id string, fn func(*record.Session) error, outcome bool) (*record.Session, error) {
	l, err := st.lockCtx(ctx, id)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return st.changeLocked(id, fn, outcome)
}

// updateSettled is update for a change that may rewrite a settled record
// (a follow-up reopening it, a landing): under the session's lock, it
// advances sessions.gen first, so no listing trusts its cache across the
// change (index.go). The session's lock comes first: a command waiting
// for it holds up nobody else's.
func (st *Store) updateSettled(ctx context.Context, id string, fn func(*record.Session) error) (*record.Session, error) {
	l, err := st.lockCtx(ctx, id)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	var s *record.Session
	err = st.bumpGeneration(ctx, func() error {
		var err error
		s, err = st.changeLocked(id, fn, false)
		return err
	})
	return s, err
}

// tryRecord is record for a reader that finds something to record (a dead
// owner): it takes the lock only if it is free, since a reader never waits
// for a writer. ok is false when it was not. Under lease locks a lock
// whose holder is a process of this machine that is gone counts as free,
// as a flock is once its holder died (store.BreakIfHolderGone): nothing
// else would make the reader look again when its lease runs out.
func (st *Store) tryRecord(id string, fn func(*record.Session) error) (s *record.Session, ok bool, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one try, no waiting
	l, err := st.lockCtx(ctx, id)
	if errors.Is(err, context.Canceled) && store.BreakIfHolderGone(st.dir, st.lockPath(id)) {
		l, err = st.lockCtx(ctx, id)
	}
	if errors.Is(err, context.Canceled) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	defer l.Unlock()
	s, err = st.changeLocked(id, fn, true)
	return s, true, err
}

// changeLocked loads, changes and saves a record; the caller holds its lock.
func (st *Store) changeLocked(id string, fn func(*record.Session) error, outcome bool) (*record.Session, error) {
	s, err := st.load(id)
	if err != nil {
		return nil, err
	}
	if err := fn(s); err != nil {
		return nil, err
	}
	err = st.save(s)
	if err != nil && outcome && IsNoSpace(err) && os.Remove(st.reservePath(id)) == nil {
		err = st.save(s)
	}
	if err != nil {
		return nil, err
	}
	if s.Settled() {
		// A settled session needs no reserve until a follow-up reopens it.
		os.Remove(st.reservePath(id))
	}
	return s, nil
}

// lock takes the session's lock. A session that is gone is ErrNotFound.
func (st *Store) lock(id string) (*store.Lock, error) { return st.lockCtx(context.Background(), id) }

func (st *Store) lockCtx(ctx context.Context, id string) (*store.Lock, error) {
	return st.files().LockSession(ctx, id)
}

// dropLocksOfGone lets go of the session's locks that a supervisor this
// command has just killed left behind: under the lease scheme a dead
// holder's lock stays until its lease runs out, and the kill knows what
// a waiter cannot (store.BreakIfHolderGone). Under flock the kernel let
// go of them as it died.
func (st *Store) dropLocksOfGone(id string) {
	store.BreakIfHolderGone(st.dir, st.lockPath(id))
	store.BreakIfHolderGone(st.dir, st.supervisorLockPath(id))
}

// ids lists the ids of every session directory.
func (st *Store) ids() ([]string, error) { return st.files().SessionIDs() }

// remove deletes a session's directory: readers see it whole or gone. Its
// errors name the session; the caller says what removed it ("rm 1a2b: ...").
func (st *Store) remove(ctx context.Context, id string) error {
	return st.files().RemoveSession(ctx, id)
}

// sessionCgroup is the cgroup the session's supervisor made, or "".
func (st *Store) sessionCgroup(id string) string {
	data, err := os.ReadFile(st.cgroupFile(id))
	if err != nil {
		return ""
	}
	dir := strings.TrimSpace(string(data))
	if !proc.IsSessionCgroup(dir, id, st.dir) {
		// Not a cgroup a supervisor of this session made: a record can be
		// written by anyone who can write the state dir, and what it names
		// is killed.
		return ""
	}
	return dir
}

// forgetCgroup removes the record of a removed cgroup.
func (st *Store) forgetCgroup(id string) { os.Remove(st.cgroupFile(id)) }
