package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// SessionFiles are a session's files as its supervisor writes them: its
// directory, its logs, its turn files, its supervisor lock.
type SessionFiles struct {
	st *Store
	id string
}

// Dir is the session's directory: the supervisor stops its session once
// it is gone or replaced.
func (f SessionFiles) Dir() string { return f.st.SessionDir(f.id) }

// OpenLog opens the supervisor's own log, sessions/<id>/supervisor.log,
// for appending.
func (f SessionFiles) OpenLog() (*os.File, error) { return OpenAppend(f.st.dir, f.st.LogPath(f.id)) }

// OpenSetupLog opens the log of the worktree's making for appending.
func (f SessionFiles) OpenSetupLog() (*os.File, error) {
	return OpenAppend(f.st.Dir(), f.st.SetupLog(f.id))
}

// TurnFiles opens turn n's stdout and stderr files for appending.
func (f SessionFiles) TurnFiles(n int) (out, errf *os.File, err error) {
	return f.st.TurnFiles(f.id, n)
}

// TurnFiles opens turn n's stdout and stderr files for appending.
func (st *Store) TurnFiles(id string, n int) (out, errf *os.File, err error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	out, err = st.OpenFile(st.TurnPath(id, n), flags)
	if err != nil {
		return nil, nil, err
	}
	errf, err = st.OpenFile(st.StderrPath(id, n), flags)
	if err != nil {
		out.Close()
		return nil, nil, err
	}
	return out, errf, nil
}

// NewTurnFile creates turn n's file, which must not exist (it was removed
// while the turn ran), making its directory again if that went too; no
// part of its path below the state dir may be a symlink.
func (f SessionFiles) NewTurnFile(n int) (*os.File, error) {
	path := f.st.TurnPath(f.id, n)
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL | os.O_APPEND
	file, err := f.st.OpenFile(path, flags)
	if errors.Is(err, fs.ErrNotExist) {
		if merr := os.Mkdir(filepath.Dir(path), dirPerm); merr == nil || errors.Is(merr, fs.ErrExist) {
			file, err = f.st.OpenFile(path, flags)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		// What took the removed file's place may be a symlink, which
		// O_EXCL refuses as "file exists": say what it is.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			err = &SymlinkError{Path: path}
		}
	}
	return file, err
}

// MarkWorktree writes, beside where the worktree at path goes, the state
// dir whose session it is: commands run inside the worktree find the state
// dir through it, and another state dir never takes the worktree for a
// leftover of a session it does not have.
func (f SessionFiles) MarkWorktree(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return fmt.Errorf("make the worktree's directory: %w", err)
	}
	if err := store.WriteFileAtomic("", workspace.OwnerFile(path), []byte(f.st.Dir()+"\n")); err != nil {
		return fmt.Errorf("record the worktree's state dir: %w", err)
	}
	return nil
}

// A settled session can be reopened by a follow-up while the supervisor that
// settled it is still tearing down: it kills and removes the session's
// cgroup on its way out, and would kill the agent a new supervisor has just
// started there. So each supervisor holds sessions/<id>/supervisor.lock for
// its whole life, and a new one makes its cgroup only once the lock is
// free: once the previous supervisor has exited, which the kernel makes
// true even of one that was SIGKILLed (under lease locks, once its lease
// has run out: store.LockFile).

// LockSupervisor takes the session's supervisor lock, waiting (until ctx
// ends) for a previous supervisor to exit. unlock releases it, once the
// session's cgroup is gone.
func (f SessionFiles) LockSupervisor(ctx context.Context) (unlock func(), err error) {
	l, err := LockFileCtx(ctx, f.st.Dir(), f.st.SupervisorLockPath(f.id))
	if err != nil {
		return nil, err
	}
	return l.Unlock, nil
}
