package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Store is the state directory on disk. doc.go describes its layout.
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

func (st *Store) sessionsDir() string         { return filepath.Join(st.dir, "sessions") }
func (st *Store) sessionDir(id string) string { return filepath.Join(st.sessionsDir(), id) }
func (st *Store) metaPath(id string) string   { return filepath.Join(st.sessionDir(id), "meta.json") }
func (st *Store) lockPath(id string) string   { return filepath.Join(st.sessionDir(id), ".lock") }
func (st *Store) inboxDir(id string) string   { return filepath.Join(st.sessionDir(id), "inbox") }
func (st *Store) logPath(id string) string    { return filepath.Join(st.sessionDir(id), "supervisor.log") }
func (st *Store) turnsDir(id string) string   { return filepath.Join(st.sessionDir(id), "turns") }
func (st *Store) cgroupFile(id string) string { return filepath.Join(st.sessionDir(id), "cgroup") }
func (st *Store) reservePath(id string) string {
	return filepath.Join(st.sessionDir(id), ".reserve")
}

// TurnPath is the raw stdout of turn n (1-based).
func (st *Store) TurnPath(id string, n int) string {
	return filepath.Join(st.turnsDir(id), "turn_"+strconv.Itoa(n)+".jsonl")
}

// StderrPath is the raw stderr of turn n.
func (st *Store) StderrPath(id string, n int) string {
	return filepath.Join(st.turnsDir(id), "turn_"+strconv.Itoa(n)+".stderr")
}

// SetupLog is what making the session's worktree did and printed: git,
// what was brought along, the setup command's output.
func (st *Store) SetupLog(id string) string { return filepath.Join(st.sessionDir(id), "setup.log") }

// SupervisorLog is the supervisor's own diagnostics for a session.
func (st *Store) SupervisorLog(id string) string { return st.logPath(id) }

// Prepare makes the state dir, ready for sessions (what the first
// command that writes does; zwarm init does it up front).
func (st *Store) Prepare() error { return st.ensureWritable() }

// checkUsable refuses, creating nothing, a state dir that can never be
// made: a file in the way of it or of one of its parents.
func (st *Store) checkUsable() error {
	for d := st.dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil:
			return fmt.Errorf("state dir %s is not usable: %s is not a directory (choose another with --state-dir or ZWARM_STATE_DIR)", st.dir, d)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("state dir %s is not usable: %w (choose another with --state-dir or ZWARM_STATE_DIR)", st.dir, errors.Unwrap(err))
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// ensureWritable creates the sessions directory and proves it can be
// written, so that a read-only state dir fails before anything starts.
func (st *Store) ensureWritable() error {
	if err := os.MkdirAll(st.sessionsDir(), dirPerm); err != nil {
		return fmt.Errorf("state dir %s is not usable: %w (choose another with --state-dir or ZWARM_STATE_DIR)", st.dir, errors.Unwrap(err))
	}
	if err := CheckNoSymlinks(st.dir, st.sessionsDir()); err != nil {
		return err // new sessions would be made wherever it points
	}
	st.ignoreSelf()
	f, err := os.CreateTemp(st.sessionsDir(), ".probe*")
	if err != nil {
		return fmt.Errorf("state dir %s is not writable: %w (fix its permissions or choose another with --state-dir)", st.dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// IgnoreFile is the state dir's own .gitignore: it ignores everything in
// the state dir, so transcripts are never committed and the repository
// it is in is never dirtied, without an edit to the repository's files.
const IgnoreFile = ".gitignore"

// ignoreSelf writes the state dir's .gitignore if it has none (a user's
// own is left alone).
func (st *Store) ignoreSelf() {
	f, err := os.OpenFile(filepath.Join(st.dir, IgnoreFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o644)
	if err != nil {
		return // there already, or nowhere to write it: nothing to do
	}
	f.WriteString("# zwarm's state (transcripts of agent sessions) is never committed.\n*\n")
	f.Close()
}

// create makes a new session's directories and writes its first record.
// Everything is made under a temporary name and renamed into place, so a
// spawn that fails (a full disk) leaves no half-made session behind.
func (st *Store) create(s *Session) error {
	if err := st.ensureWritable(); err != nil {
		return err
	}
	tmp := filepath.Join(st.sessionsDir(), ".new-"+s.ID)
	err := func() error {
		for _, d := range []string{tmp, filepath.Join(tmp, "turns"), filepath.Join(tmp, "inbox")} {
			if err := os.Mkdir(d, dirPerm); err != nil {
				return err
			}
		}
		if err := writeReserve(filepath.Join(tmp, ".reserve")); err != nil {
			return err
		}
		data, err := st.encode(s)
		if err != nil {
			return err
		}
		if err := st.writeFileAtomic(filepath.Join(tmp, "meta.json"), data); err != nil {
			return err
		}
		return os.Rename(tmp, st.sessionDir(s.ID))
	}()
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("create session %s in %s: %w%s", ShortID(s.ID), st.dir, err, noSpaceHint(err))
	}
	return nil
}

// reserveSize is the disk space each session keeps in reserve: on a full
// disk it is given back so that the outcome can still be recorded.
const reserveSize = 256 << 10

func writeReserve(path string) error {
	return writeFileNoFollow(path, make([]byte, reserveSize))
}

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
func (st *Store) save(s *Session) error {
	data, err := st.encode(s)
	if err != nil {
		return err
	}
	if err := st.writeFileAtomic(st.metaPath(s.ID), data); err != nil {
		return fmt.Errorf("save session %s: %w", s.ID, err)
	}
	return nil
}

func (st *Store) encode(s *Session) ([]byte, error) {
	if s.Legacy {
		return nil, fmt.Errorf("session %s was written by the Python zwarm and is read-only", s.ID)
	}
	s.Version = SchemaVersion
	s.UpdatedAt = time.Now().UTC()
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode session %s: %w", s.ID, err)
	}
	return append(data, '\n'), nil
}

// load reads a session record as it is on disk.
func (st *Store) load(id string) (*Session, error) {
	data, err := os.ReadFile(st.metaPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, &RecordError{ID: id, Err: err}
	}
	return decodeSession(st.metaPath(id), id, data)
}

// update changes a session under its lock: the change sees the latest record
// and no other writer (supervisor, inject, kill) interleaves with it.
func (st *Store) update(id string, fn func(*Session) error) (*Session, error) {
	return st.change(id, fn, false)
}

// record is update for an outcome (a turn's end, a kill, a dead owner): on
// a full disk it gives back the session's reserve and tries once more, so
// the outcome and its reason reach the record.
func (st *Store) record(id string, fn func(*Session) error) (*Session, error) {
	return st.change(id, fn, true)
}

func (st *Store) change(id string, fn func(*Session) error, outcome bool) (*Session, error) {
	return st.changeCtx(context.Background(), id, fn, outcome)
}

// updateCtx is update that gives up waiting for the lock when ctx ends.
func (st *Store) updateCtx(ctx context.Context, id string, fn func(*Session) error) (*Session, error) {
	return st.changeCtx(ctx, id, fn, false)
}

func (st *Store) changeCtx(ctx context.Context, id string, fn func(*Session) error, outcome bool) (*Session, error) {
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
func (st *Store) updateSettled(ctx context.Context, id string, fn func(*Session) error) (*Session, error) {
	l, err := st.lockCtx(ctx, id)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	var s *Session
	err = st.bumpGeneration(ctx, func() error {
		var err error
		s, err = st.changeLocked(id, fn, false)
		return err
	})
	return s, err
}

// tryRecord is record for a reader that finds something to record (a dead
// owner): it takes the lock only if it is free, since a reader never waits
// for a writer. ok is false when it was not.
func (st *Store) tryRecord(id string, fn func(*Session) error) (s *Session, ok bool, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one try, no waiting
	l, err := st.lockCtx(ctx, id)
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
func (st *Store) changeLocked(id string, fn func(*Session) error, outcome bool) (*Session, error) {
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
func (st *Store) lock(id string) (*fileLock, error) { return st.lockCtx(context.Background(), id) }

func (st *Store) lockCtx(ctx context.Context, id string) (*fileLock, error) {
	l, err := lockFileAs(ctx, st.lockPath(id), "session "+ShortID(id))
	var te *LockTimeoutError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	case errors.As(err, &te):
		return nil, err // it names the session already
	case err != nil:
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return l, nil
}

// ids lists the ids of every session directory.
func (st *Store) ids() ([]string, error) {
	ents, err := os.ReadDir(st.sessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() && validID(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// resolve turns a user's id or prefix into a full session id.
func (st *Store) resolve(prefix string) (string, error) {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	if err := validID(prefix); err != nil {
		return "", err
	}
	all, err := st.ids()
	if err != nil {
		return "", err
	}
	return resolveID(prefix, all)
}

// remove deletes a session's directory. It is first renamed out of the
// sessions dir, so readers see the session either whole or gone. Its
// errors name the session and the paths; the caller says what removed it
// ("rm 1a2b: ...").
func (st *Store) remove(ctx context.Context, id string) error {
	l, err := st.lockCtx(ctx, id)
	if err != nil {
		return err
	}
	defer l.Unlock()
	trash := filepath.Join(st.sessionsDir(), ".removing-"+id)
	if err := os.Rename(st.sessionDir(id), trash); err != nil {
		return err
	}
	return os.RemoveAll(trash)
}

// sessionCgroup is the cgroup the session's supervisor made, or "".
func (st *Store) sessionCgroup(id string) string {
	data, err := os.ReadFile(st.cgroupFile(id))
	if err != nil {
		return ""
	}
	dir := strings.TrimSpace(string(data))
	if !filepath.IsAbs(dir) || !strings.Contains(filepath.Base(dir), id) {
		return "" // not something this zwarm wrote
	}
	return dir
}

// forgetCgroup removes the record of a removed cgroup.
func (st *Store) forgetCgroup(id string) { os.Remove(st.cgroupFile(id)) }
