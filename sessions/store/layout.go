package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ConfigFile is the name of zwarm's settings file in the state directory.
const ConfigFile = "config.toml"

// IgnoreFile is the state dir's own .gitignore: it ignores everything in
// the state dir, so transcripts are never committed and the repository
// it is in is never dirtied, without an edit to the repository's files.
const IgnoreFile = ".gitignore"

// Layout is where the state dir Dir (absolute) keeps each file of a
// session; package sessions' doc.go lists them. The ids it is given have
// passed ValidID.
type Layout struct{ Dir string }

// Sessions is the directory of every session.
func (l Layout) Sessions() string { return filepath.Join(l.Dir, "sessions") }

// Session is the directory of one.
func (l Layout) Session(id string) string { return filepath.Join(l.Sessions(), id) }

// Meta is the session's record.
func (l Layout) Meta(id string) string { return filepath.Join(l.Session(id), "meta.json") }

// Lock is held while the record is changed (LockSession).
func (l Layout) Lock(id string) string { return filepath.Join(l.Session(id), ".lock") }

// Inbox holds the session's queued follow-ups.
func (l Layout) Inbox(id string) string { return filepath.Join(l.Session(id), "inbox") }

// SupervisorLog is the supervisor's own diagnostics.
func (l Layout) SupervisorLog(id string) string {
	return filepath.Join(l.Session(id), "supervisor.log")
}

// SupervisorDied is written by an agent's guard when its supervisor
// dies: the supervisor's pid and when (proc.Guard).
func (l Layout) SupervisorDied(id string) string {
	return filepath.Join(l.Session(id), "supervisor.died")
}

// SupervisorLock is held by a supervisor for its whole life.
func (l Layout) SupervisorLock(id string) string {
	return filepath.Join(l.Session(id), "supervisor.lock")
}

// Turns holds the turn files.
func (l Layout) Turns(id string) string { return filepath.Join(l.Session(id), "turns") }

// Turn is the raw stdout of turn n (1-based).
func (l Layout) Turn(id string, n int) string {
	return filepath.Join(l.Turns(id), "turn_"+strconv.Itoa(n)+".jsonl")
}

// Stderr is the raw stderr of turn n.
func (l Layout) Stderr(id string, n int) string {
	return filepath.Join(l.Turns(id), "turn_"+strconv.Itoa(n)+".stderr")
}

// TurnTimes is when each item of turn n was first and last reported (the
// telemetry package's format), kept so a trace rebuilt later has them.
func (l Layout) TurnTimes(id string, n int) string {
	return filepath.Join(l.Turns(id), "turn_"+strconv.Itoa(n)+".times")
}

// SpanEnd holds when the session first settled: where its trace span ends.
func (l Layout) SpanEnd(id string) string { return filepath.Join(l.Session(id), "span_end") }

// Cgroup holds the path of the session's cgroup, while it has one.
func (l Layout) Cgroup(id string) string { return filepath.Join(l.Session(id), "cgroup") }

// Reserve is the disk space the session keeps (WriteReserve).
func (l Layout) Reserve(id string) string { return filepath.Join(l.Session(id), ".reserve") }

// SetupLog is what making the session's worktree did and printed.
func (l Layout) SetupLog(id string) string { return filepath.Join(l.Session(id), "setup.log") }

// CheckUsable refuses, creating nothing, a state dir that can never be
// made: a file in the way of it or of one of its parents.
func (l Layout) CheckUsable() error {
	for d := l.Dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil:
			return fmt.Errorf("state dir %s is not usable: %s is not a directory (choose another with --state-dir or ZWARM_STATE_DIR)", l.Dir, d)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("state dir %s is not usable: %w (choose another with --state-dir or ZWARM_STATE_DIR)", l.Dir, errors.Unwrap(err))
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// Prepare creates the sessions directory and proves it can be written,
// so that a read-only state dir fails before anything starts.
func (l Layout) Prepare() error {
	if err := os.MkdirAll(l.Sessions(), DirPerm); err != nil {
		return fmt.Errorf("state dir %s is not usable: %w (choose another with --state-dir or ZWARM_STATE_DIR)", l.Dir, errors.Unwrap(err))
	}
	if err := CheckNoSymlinks(l.Dir, l.Sessions()); err != nil {
		return err // new sessions would be made wherever it points
	}
	l.ignoreSelf()
	f, err := os.CreateTemp(l.Sessions(), ".probe*")
	if err != nil {
		return fmt.Errorf("state dir %s is not writable: %w (fix its permissions or choose another with --state-dir)", l.Dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// ignoreSelf writes the state dir's .gitignore if it has none (a user's
// own is left alone).
func (l Layout) ignoreSelf() {
	f, err := os.OpenFile(filepath.Join(l.Dir, IgnoreFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return // there already, or nowhere to write it: nothing to do
	}
	f.WriteString("# zwarm's state (transcripts of agent sessions) is never committed.\n*\n")
	f.Close()
}

// CreateSession makes a new session's directories and writes its first
// record, meta. Everything is made under a temporary name and renamed
// into place, so a spawn that fails (a full disk) leaves no half-made
// session behind. The sessions directory is there (Prepare).
func (l Layout) CreateSession(id string, meta []byte) error {
	tmp := filepath.Join(l.Sessions(), ".new-"+id)
	err := func() error {
		for _, d := range []string{tmp, filepath.Join(tmp, "turns"), filepath.Join(tmp, "inbox")} {
			if err := os.Mkdir(d, DirPerm); err != nil {
				return err
			}
		}
		if err := WriteReserve(filepath.Join(tmp, ".reserve")); err != nil {
			return err
		}
		return WriteFileAtomic(l.Dir, filepath.Join(tmp, "meta.json"), meta)
	}()
	if err == nil {
		err = os.Rename(tmp, l.Session(id))
	}
	if err != nil {
		os.RemoveAll(tmp)
	}
	return err
}

// ReserveSize is the disk space each session keeps in reserve: on a full
// disk it is given back so that the outcome can still be recorded.
const ReserveSize = 256 << 10

// WriteReserve makes a session's reserve at path.
func WriteReserve(path string) error {
	return WriteFileNoFollow(path, make([]byte, ReserveSize))
}

// LockSession takes the session's lock (LockFile). A session that is gone
// is ErrNotFound.
func (l Layout) LockSession(ctx context.Context, id string) (*Lock, error) {
	lk, err := LockFile(ctx, l.Dir, l.Lock(id), "session "+ShortID(id))
	var te *LockTimeoutError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	case errors.As(err, &te):
		return nil, err // it names the session already
	case err != nil:
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return lk, nil
}

// SessionIDs lists the ids of every session directory.
func (l Layout) SessionIDs() ([]string, error) {
	ents, err := os.ReadDir(l.Sessions())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() && ValidID(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// RemoveSession deletes a session's directory, under its lock, unless
// keep (if not nil), asked under the lock, says why not. It is first
// renamed out of the sessions dir, so readers see the session either whole
// or gone.
func (l Layout) RemoveSession(ctx context.Context, id string, keep func() error) error {
	lk, err := l.LockSession(ctx, id)
	if err != nil {
		return err // it names the session; the caller says what removes it
	}
	defer lk.Unlock()
	if keep != nil {
		if err := keep(); err != nil {
			return err
		}
	}
	trash := filepath.Join(l.Sessions(), ".removing-"+id)
	if err := os.Rename(l.Session(id), trash); errors.Is(err, fs.ErrNotExist) {
		// Another process removed it while this one waited for its lock.
		return fmt.Errorf("session %s: %w (removed meanwhile)", id, ErrNotFound)
	} else if err != nil {
		return err // it names both paths
	}
	return os.RemoveAll(trash)
}

// ResolveSession turns a user's id or prefix into a full session id. It
// costs the same however many sessions there are, near enough: a whole id
// is one stat; a prefix reads the names in the sessions dir (no stat, no
// sort) and stats only those that match it.
func (l Layout) ResolveSession(prefix string) (string, error) {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	if err := ValidID(prefix); err != nil {
		return "", err
	}
	if len(prefix) == IDLen {
		// Every id is this long: a whole one is nobody's prefix.
		fi, err := os.Lstat(l.Session(prefix))
		switch {
		case err == nil && fi.IsDir():
			return prefix, nil
		case err == nil || errors.Is(err, fs.ErrNotExist):
			return ResolveID(prefix, nil)
		}
		return "", fmt.Errorf("session %s: %w", prefix, err)
	}
	hits, err := l.sessionsWithPrefix(prefix)
	if err != nil {
		return "", err
	}
	return ResolveID(prefix, hits)
}

// sessionsWithPrefix lists the session directories whose names start with
// prefix, reading the directory's names in batches.
func (l Layout) sessionsWithPrefix(prefix string) ([]string, error) {
	d, err := os.Open(l.Sessions())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer d.Close()
	var hits []string
	for {
		names, err := d.Readdirnames(4096)
		for _, name := range names {
			if !strings.HasPrefix(name, prefix) || ValidID(name) != nil {
				continue
			}
			if fi, err := os.Lstat(filepath.Join(l.Sessions(), name)); err == nil && fi.IsDir() {
				hits = append(hits, name)
			}
		}
		if errors.Is(err, io.EOF) {
			return hits, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
	}
}
