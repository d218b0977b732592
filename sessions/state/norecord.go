package state

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/store"
)

// errNoRecord is a session directory without its meta.json: removed behind
// zwarm's back. zwarm never makes one (a session's directory is renamed
// into place with its record, and out of place whole), so it is broken,
// not being created: it is listed as unreadable, kill stops what runs of
// it, rm --force removes it, and its supervisor stops its agent.
var ErrNoRecord = errors.New("is missing: the directory holds no session record")

// NoRecordError is the error a read of id's record gets when its
// directory is there without one.
func (st *Store) NoRecordError(id string) *RecordError {
	return &RecordError{ID: id, Err: fmt.Errorf("%s %w", st.MetaPath(id), ErrNoRecord)}
}

// RecordMissing reports whether the session directory of id is there
// without a meta.json. A directory being created or removed is never taken
// for one: the record's absence is checked inside the directory as it was
// opened, and that directory must still be the one in place afterwards
// (a removal renames it away before it empties it).
func (st *Store) RecordMissing(id string) bool {
	fd, err := unix.Open(st.SessionDir(id), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var meta unix.Stat_t
	if err := unix.Fstatat(fd, "meta.json", &meta, unix.AT_SYMLINK_NOFOLLOW); !errors.Is(err, unix.ENOENT) {
		return false
	}
	var opened, now unix.Stat_t
	if unix.Fstat(fd, &opened) != nil || unix.Lstat(st.SessionDir(id), &now) != nil {
		return false
	}
	return opened.Dev == now.Dev && opened.Ino == now.Ino
}

// RecordMissing reports whether the session's directory is there without
// its record: what the supervisor watches for, besides its directory, since
// a session nobody can see or kill must not go on running.
func (f SessionFiles) RecordMissing() bool { return f.st.RecordMissing(f.id) }

// RecordError is a session whose record could not be read.
type RecordError struct {
	ID  string
	Err error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("session %s: %v", store.ShortID(e.ID), e.Err)
}
func (e *RecordError) Unwrap() error { return e.Err }
