package state

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

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
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

// Files is where the store keeps each file (package store).
func (st *Store) Files() store.Layout { return store.Layout{Dir: st.dir} }

func (st *Store) SessionsDir() string                 { return st.Files().Sessions() }
func (st *Store) SessionDir(id string) string         { return st.Files().Session(id) }
func (st *Store) MetaPath(id string) string           { return st.Files().Meta(id) }
func (st *Store) LockPath(id string) string           { return st.Files().Lock(id) }
func (st *Store) InboxDir(id string) string           { return st.Files().Inbox(id) }
func (st *Store) LogPath(id string) string            { return st.Files().SupervisorLog(id) }
func (st *Store) TurnsDir(id string) string           { return st.Files().Turns(id) }
func (st *Store) CgroupFile(id string) string         { return st.Files().Cgroup(id) }
func (st *Store) ReservePath(id string) string        { return st.Files().Reserve(id) }
func (st *Store) SupervisorLockPath(id string) string { return st.Files().SupervisorLock(id) }

// TurnPath is the raw stdout of turn n (1-based).
func (st *Store) TurnPath(id string, n int) string { return st.Files().Turn(id, n) }

// StderrPath is the raw stderr of turn n.
func (st *Store) StderrPath(id string, n int) string { return st.Files().Stderr(id, n) }

// SetupLog is what making the session's worktree did and printed: git,
// what was brought along, the setup command's output.
func (st *Store) SetupLog(id string) string { return st.Files().SetupLog(id) }

// SupervisorLog is the supervisor's own diagnostics for a session.
func (st *Store) SupervisorLog(id string) string { return st.LogPath(id) }

// Prepare makes the state dir, ready for sessions (what the first
// command that writes does; zwarm init does it up front).
func (st *Store) Prepare() error { return st.EnsureWritable() }

// CheckUsable refuses, creating nothing, a state dir that can never be
// made: a file in the way of it or of one of its parents.
func (st *Store) CheckUsable() error {
	if err := st.notARepository(); err != nil {
		return err
	}
	return st.Files().CheckUsable()
}

// EnsureWritable creates the sessions directory and proves it can be
// written, so that a read-only state dir fails before anything starts.
func (st *Store) EnsureWritable() error {
	if err := st.notARepository(); err != nil {
		return err
	}
	return st.Files().Prepare()
}

// notARepository refuses a state dir that is the top of a git work tree
// (it holds .git: --state-dir given the project instead of its .zwarm).
// zwarm would write its sessions among the project's files, and its
// .gitignore of "*" there would hide every new file from git add.
func (st *Store) notARepository() error {
	if _, err := os.Lstat(filepath.Join(st.dir, ".git")); err != nil {
		return nil
	}
	return config.Invalidf("state dir %s is the top of a git repository (it holds .git), not a directory of zwarm's own: give one such as %s with --state-dir or ZWARM_STATE_DIR",
		st.dir, filepath.Join(st.dir, ".zwarm"))
}

// IgnoreFile is the state dir's own .gitignore (store.IgnoreFile).
const IgnoreFile = store.IgnoreFile

// Create makes a new session's directories and writes its first record,
// whole or not at all (store.Layout.CreateSession).
func (st *Store) Create(s *record.Session) error {
	if err := st.EnsureWritable(); err != nil {
		return err
	}
	data, err := st.encode(s)
	if err == nil {
		err = st.Files().CreateSession(s.ID, data)
	}
	if err != nil {
		return fmt.Errorf("create session %s in %s: %w%s", store.ShortID(s.ID), st.dir, err, NoSpaceHint(err))
	}
	return nil
}

func WriteReserve(path string) error { return store.WriteReserve(path) }

// NoSpaceHint says what to do about a full disk.
func NoSpaceHint(err error) string {
	if IsNoSpace(err) {
		return " (free some space on that disk, or choose another state dir with --state-dir)"
	}
	return ""
}

// IsNoSpace reports a full disk or quota.
func IsNoSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}

// RefusedWrite is err if it is the state dir refusing a write (it is
// read-only, or full), else nil: a caller that passes over a session it
// cannot change (one removed or reopened meanwhile) must not pass over
// every session in a state dir that takes no change at all. A record that
// cannot be read is the first kind.
func RefusedWrite(err error) error {
	var re *RecordError
	if errors.As(err, &re) || !IsNoSpace(err) && !store.IsReadOnly(err) {
		return nil
	}
	return err
}

// Save replaces meta.json atomically.
func (st *Store) Save(s *record.Session) error {
	data, err := st.encode(s)
	if err != nil {
		return err
	}
	if err := st.WriteFileAtomic(st.MetaPath(s.ID), data); err != nil {
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

// Load reads a session record as it is on disk.
func (st *Store) Load(id string) (*record.Session, error) {
	data, err := os.ReadFile(st.MetaPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		if st.RecordMissing(id) {
			return nil, st.NoRecordError(id)
		}
		return nil, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, &RecordError{ID: id, Err: err}
	}
	return DecodeSession(st.MetaPath(id), id, data)
}

// Update changes a session under its lock: the change sees the latest record
// and no other writer (supervisor, inject, kill) interleaves with it.
func (st *Store) Update(id string, fn func(*Tx) error) (*record.Session, error) {
	return st.change(id, fn, false)
}

// Record is update for an outcome (a turn's end, a kill, a dead owner): on
// a full disk it gives back the session's reserve and tries once more, so
// the outcome and its reason reach the record.
func (st *Store) Record(id string, fn func(*Tx) error) (*record.Session, error) {
	return st.change(id, fn, true)
}

func (st *Store) change(id string, fn func(*Tx) error, outcome bool) (*record.Session, error) {
	return st.ChangeCtx(context.Background(), id, fn, outcome)
}

// UpdateCtx is update that gives up waiting for the lock when ctx ends.
func (st *Store) UpdateCtx(ctx context.Context, id string, fn func(*Tx) error) (*record.Session, error) {
	return st.ChangeCtx(ctx, id, fn, false)
}

func (st *Store) ChangeCtx(ctx context.Context, id string, fn func(*Tx) error, outcome bool) (*record.Session, error) {
	l, err := st.lockCtx(ctx, id)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return st.changeLocked(id, fn, outcome)
}

// UpdateSettled is update for a change that may rewrite a settled record
// (a follow-up reopening it, a landing): under the session's lock, it
// advances sessions.gen first, so no listing trusts its cache across the
// change (index.go). The session's lock comes first: a command waiting
// for it holds up nobody else's.
func (st *Store) UpdateSettled(ctx context.Context, id string, fn func(*Tx) error) (*record.Session, error) {
	l, err := st.lockCtx(ctx, id)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	var s *record.Session
	err = st.BumpGeneration(ctx, func() error {
		var err error
		s, err = st.changeLocked(id, fn, false)
		return err
	})
	return s, err
}

// TryRecord is record for a reader that finds something to record (a dead
// owner): it takes the lock only if it is free, since a reader never waits
// for a writer. ok is false when it was not. Under lease locks a lock
// whose holder is a process of this machine that is gone counts as free,
// as a flock is once its holder died (store.BreakIfHolderGone): nothing
// else would make the reader look again when its lease runs out.
func (st *Store) TryRecord(id string, fn func(*Tx) error) (s *record.Session, ok bool, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one try, no waiting
	l, err := st.lockCtx(ctx, id)
	if errors.Is(err, context.Canceled) && store.BreakIfHolderGone(st.dir, st.LockPath(id)) {
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
func (st *Store) changeLocked(id string, fn func(*Tx) error, outcome bool) (*record.Session, error) {
	s, err := st.Load(id)
	if err != nil {
		return nil, err
	}
	pending := s.PendingInjects
	if err := fn(&Tx{s: s}); err != nil {
		return nil, err
	}
	if pending > 0 && s.Settled() {
		// It settled with follow-ups queued (its setup or job failed
		// before they ran): nothing will deliver them, and the record
		// counts none, so none is left looking queued.
		why := fmt.Sprintf("the session %s before it was delivered (zwarm show %s says why): send it again once that is fixed",
			s.Status().Ended(), record.ShortID(id))
		if s.Status() == record.StatusKilled {
			why = "the session was killed before it was delivered" // as a kill's own drop says
		}
		if err := st.DropQueued(s, why); err != nil {
			return nil, err
		}
	}
	err = st.Save(s)
	if err != nil && outcome && IsNoSpace(err) && os.Remove(st.ReservePath(id)) == nil {
		err = st.Save(s)
	}
	if err != nil {
		return nil, err
	}
	if s.Settled() {
		// A settled session needs no reserve until a follow-up reopens it.
		os.Remove(st.ReservePath(id))
	}
	return s, nil
}

// Lock takes the session's lock. A session that is gone is ErrNotFound.
func (st *Store) Lock(id string) (*store.Lock, error) { return st.lockCtx(context.Background(), id) }

func (st *Store) lockCtx(ctx context.Context, id string) (*store.Lock, error) {
	return st.Files().LockSession(ctx, id)
}

// DropLocksOfGone lets go of the session's locks that a supervisor this
// command has just killed left behind: under the lease scheme a dead
// holder's lock stays until its lease runs out, and the kill knows what
// a waiter cannot (store.BreakIfHolderGone). Under flock the kernel let
// go of them as it died.
func (st *Store) DropLocksOfGone(id string) {
	store.BreakIfHolderGone(st.dir, st.LockPath(id))
	store.BreakIfHolderGone(st.dir, st.SupervisorLockPath(id))
}

// Ids lists the ids of every session directory.
func (st *Store) Ids() ([]string, error) { return st.Files().SessionIDs() }

// Remove deletes a session's directory: readers see it whole or gone. Its
// errors name the session; the caller says what removed it ("rm 1a2b: ...").
func (st *Store) Remove(ctx context.Context, id string) error {
	return st.Files().RemoveSession(ctx, id, nil)
}

// ErrStartedAgain is what RemoveSettled refuses a session with that a
// follow-up started again after its caller found it settled.
var ErrStartedAgain = errors.New("a follow-up started it again meanwhile; nothing was removed")

// RemoveSettled is Remove of a session its caller found settled (rm,
// clean): one that is not, under its lock, is kept (ErrStartedAgain), and
// its follow-up goes on. A record that cannot be read is removed (rm
// --force of a broken one).
func (st *Store) RemoveSettled(ctx context.Context, id string) error {
	return st.Files().RemoveSession(ctx, id, func() error {
		if s, err := st.Load(id); err == nil && !s.Settled() {
			return fmt.Errorf("session %s is %s: %w", record.ShortID(id), s.Status(), ErrStartedAgain)
		}
		return nil
	})
}

// SessionCgroup is the cgroup the session's supervisor made, or "".
func (st *Store) SessionCgroup(id string) string {
	data, err := os.ReadFile(st.CgroupFile(id))
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

// ForgetCgroup removes the record of a removed cgroup.
func (st *Store) ForgetCgroup(id string) { os.Remove(st.CgroupFile(id)) }

// Generation reads sessions.gen under a shared lock, which the caller
// releases when it has finished trusting or rebuilding the cache. ok is
// false when there is no usable generation (a read-only state dir, or a
// writer holding it: a listing never waits for one): the cache is then
// checked record by record, and not saved.
func (st *Store) Generation() (gen uint64, unlock func(), ok bool) {
	return store.Generation(st.dir, st.GenPath())
}

// BumpGeneration runs change (the rewrite of a settled record) after
// advancing sessions.gen, under its exclusive lock, so that no listing
// trusts its cache across the change.
func (st *Store) BumpGeneration(ctx context.Context, change func() error) error {
	return store.BumpGeneration(ctx, st.dir, st.GenPath(), "the session list", change)
}

// genFile is the generation counter: advanced before any settled record
// is rewritten, so that a listing never trusts its cache across a change.
const genFile = "sessions.gen"

func (st *Store) GenPath() string { return filepath.Join(st.dir, genFile) }

// LandLock serializes the landings of a state dir: each builds on the
// branch as the one before left it. It waits as long as the landing before
// takes (its verify command may run for minutes), saying who holds it as
// ctx's lock policy asks.
func (st *Store) LandLock(ctx context.Context) (func(), error) {
	if err := st.EnsureWritable(); err != nil {
		return nil, err
	}
	l, err := store.LockFile(ctx, st.dir, filepath.Join(st.dir, "land.lock"), "another landing")
	if err != nil {
		return nil, fmt.Errorf("wait for another landing: %w", err)
	}
	return func() { l.Unlock() }, nil
}

// MetaKey is the identity of a session's meta.json as it is now; ok is
// false when it cannot be had (no record: the session is watched instead).
func (st *Store) MetaKey(id string) (index.Key, bool) {
	var fs unix.Stat_t
	if unix.Lstat(st.MetaPath(id), &fs) != nil {
		return index.Key{}, false
	}
	return index.KeyOf(&fs), true
}

// PeekGeneration is sessions.gen, read without raising a close-write
// event of its own; ok is false when a writer holds it or there is none.
func (st *Store) PeekGeneration() (uint64, bool) {
	return store.PeekGeneration(st.dir, st.GenPath())
}
