package store

import (
	"os"
	"path/filepath"
)

// The permissions of what zwarm makes in a state dir: transcripts hold
// code and secrets.
const (
	DirPerm  = 0o700
	FilePerm = 0o600
)

// WriteFileAtomic replaces path with data so that a reader sees either the
// old or the new content, never a mix, even if the writer is killed. No
// directory between root (the state dir) and path may be a symlink; ""
// checks path itself only.
func WriteFileAtomic(root, path string, data []byte) error {
	if root != "" {
		if err := CheckNoSymlinks(root, path); err != nil {
			return err
		}
	}
	// The rename would replace a symlink, not write through it; but one
	// where zwarm's file should be was planted, and is reported.
	if err := refuseSymlink(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(FilePerm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}
