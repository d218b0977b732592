package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zwarm/zwarm/sessions/store"
)

// withWriteHint adds what to do to an error of a write the state dir
// refused (a read-only file system, its permissions), which a command may
// meet at any of its writes (a record saved, a session's directory
// renamed away, its reserve made): the system's "read-only file system"
// alone says what, not what to do. An error that says so already, or of a
// path outside the state dir (a repository, an agent's binary), is left
// as it is.
func (f *factory) withWriteHint(err error) error {
	if err == nil || f.chosen == nil || !store.IsReadOnly(err) || strings.Contains(err.Error(), "--state-dir") {
		return err
	}
	path := refusedPath(err)
	if path == "" || !within(f.chosen.dir, path) {
		return err
	}
	return &hinted{err, " (zwarm cannot write its state dir " + f.chosen.dir + ": fix its permissions, or choose another with --state-dir)"}
}

// refusedPath is the path an error of the file system names: the new name
// of a rename, else the one path.
func refusedPath(err error) string {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.New
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return ""
}

func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// hinted is an error with advice after its message; it is still its
// cause for errors.Is and errors.As (the exit code).
type hinted struct {
	err  error
	hint string
}

func (e *hinted) Error() string { return e.err.Error() + e.hint }
func (e *hinted) Unwrap() error { return e.err }
