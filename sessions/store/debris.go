package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DebrisAge is how old a ".new-<id>" directory must be to be debris: a
// spawn makes one and renames it into place within milliseconds.
const DebrisAge = time.Minute

// Debris lists what a spawn or a removal killed midway left in the
// sessions dir, by path: ".new-<id>" directories older than DebrisAge (a
// session made whole before it is renamed into place) and ".removing-<id>"
// ones (a session renamed out of the way before it is deleted). No reader
// takes them for sessions; each still holds a session's reserve.
func (l Layout) Debris(now time.Time) ([]string, error) {
	ents, err := os.ReadDir(l.Sessions())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		removing := strings.HasPrefix(name, ".removing-")
		if !removing && !strings.HasPrefix(name, ".new-") || !e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err != nil || !removing && now.Sub(fi.ModTime()) < DebrisAge {
			continue // gone meanwhile, or a spawn still making it
		}
		out = append(out, filepath.Join(l.Sessions(), name))
	}
	return out, nil
}

// RemoveDebris removes the debris (Debris) and returns what it removed.
// A removal still under way beside it is harmless: each deletes what the
// other has not.
func (l Layout) RemoveDebris(now time.Time) ([]string, error) {
	list, err := l.Debris(now)
	var removed []string
	for _, p := range list {
		if rerr := os.RemoveAll(p); rerr != nil {
			err = errors.Join(err, rerr)
			continue
		}
		removed = append(removed, p)
	}
	return removed, err
}
