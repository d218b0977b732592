package runs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
	"github.com/zwarm/zwarm/sessions/proc"
)

// What changed in a run.
const (
	recordChanged = 1 << iota
	eventsChanged
)

// changes turns file events and owner exits into a set of runs to read
// again. It watches the runs dir and each run's dir, so it sees files that
// do not exist yet; while the runs dir does not exist, it watches the
// nearest existing directory above it, and creates nothing. The set
// coalesces: a run whose events.jsonl grew a hundred times while the
// reader was busy is one entry.
type changes struct {
	runsDir string
	only    string // a run id, or "" for every run
	fw      *fsnotify.Watcher
	owners  *proc.ExitWatch

	mu      sync.Mutex
	order   []string
	dirty   map[string]int
	missing bool // the runs dir does not exist (yet)
	resync  bool // events may have been missed: read everything again
	c       chan struct{}
	done    chan struct{}
}

func newChanges(stateDir, only string) (*changes, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	ch := &changes{runsDir: filepath.Join(stateDir, RunsDir), only: only, fw: fw,
		dirty: map[string]int{}, c: make(chan struct{}, 1), done: make(chan struct{})}
	if ch.owners, err = proc.NewExitWatch(); err != nil {
		fw.Close()
		return nil, err
	}
	if err := ch.watchRoot(); err != nil {
		fw.Close()
		ch.owners.Close()
		return nil, err
	}
	go ch.loop()
	return ch, nil
}

// watchRoot watches the runs dir and the dirs of its runs, or while it
// does not exist, the nearest existing directory above it.
func (ch *changes) watchRoot() error {
	for {
		err := ch.fw.Add(ch.runsDir)
		if err == nil {
			ch.missing = false
			for _, id := range ch.ids() {
				ch.addRun(id)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		ch.missing = true
		dir := filepath.Dir(ch.runsDir)
		for {
			err := ch.fw.Add(dir)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrNotExist) || dir == filepath.Dir(dir) {
				return err
			}
			dir = filepath.Dir(dir)
		}
		// The next dir down may have been made before the watch existed,
		// which then never sees it: look again.
		rel, err := filepath.Rel(dir, ch.runsDir)
		if err != nil {
			return err
		}
		next := filepath.Join(dir, strings.Split(rel, string(filepath.Separator))[0])
		if _, err := os.Stat(next); err != nil {
			return nil
		}
	}
}

// ids are the runs in the runs dir that the subscription follows.
func (ch *changes) ids() []string {
	ents, _ := os.ReadDir(ch.runsDir)
	var out []string
	for _, e := range ents {
		if e.IsDir() && ch.wanted(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func (ch *changes) wanted(id string) bool {
	if ch.only != "" {
		return id == ch.only
	}
	return runID(id)
}

// runID accepts the names of run dirs: uuids, never a temp or dot entry.
func runID(name string) bool {
	if len(name) != 36 {
		return false
	}
	for _, r := range name {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return false
		}
	}
	return true
}

// addRun watches a run's dir. A failure (the system's watch limit) only
// costs that run its live updates.
func (ch *changes) addRun(id string) {
	ch.fw.Add(filepath.Join(ch.runsDir, id))
}

func (ch *changes) mark(id string, what int) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.dirty[id] == 0 {
		ch.order = append(ch.order, id)
	}
	ch.dirty[id] |= what
	ch.wakeLocked()
}

func (ch *changes) markAll() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.resync = true
	ch.wakeLocked()
}

func (ch *changes) wakeLocked() {
	select {
	case ch.c <- struct{}{}:
	default:
	}
}

// wake delivers a value when something changed.
func (ch *changes) wake() <-chan struct{} { return ch.c }

// take returns what changed, in the order it changed, and whether
// everything must be read again.
func (ch *changes) take() (ids []string, what map[string]int, resync bool) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ids, what, resync = ch.order, ch.dirty, ch.resync
	ch.order, ch.dirty, ch.resync = nil, map[string]int{}, false
	return ids, what, resync
}

func (ch *changes) loop() {
	defer close(ch.done)
	for {
		select {
		case ev, ok := <-ch.fw.Events:
			if !ok {
				return
			}
			ch.onEvent(ev)
		case _, ok := <-ch.fw.Errors:
			if !ok {
				return
			}
			// Events were lost (the queue overflowed): anything may have
			// changed.
			ch.markAll()
		case <-ch.owners.C():
			for _, id := range ch.owners.Drain() {
				ch.mark(id, recordChanged)
			}
		}
	}
}

func (ch *changes) onEvent(ev fsnotify.Event) {
	if ch.missing {
		// Something above the runs dir changed: it may exist now, with
		// runs in it that no watch saw arrive.
		if ch.watchRoot() == nil && !ch.missing {
			ch.markAll()
		}
		return
	}
	if ev.Name == ch.runsDir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		ch.watchRoot()
		ch.markAll()
		return
	}
	rel, err := filepath.Rel(ch.runsDir, ev.Name)
	if err != nil || strings.HasPrefix(rel, "..") {
		return
	}
	parts := strings.Split(rel, string(filepath.Separator))
	id := parts[0]
	if !ch.wanted(id) {
		return
	}
	switch {
	case len(parts) == 1:
		if ev.Has(fsnotify.Create) {
			ch.addRun(id)
		}
		ch.mark(id, recordChanged|eventsChanged)
	case parts[1] == RecordFile:
		ch.mark(id, recordChanged)
	case parts[1] == EventsFile && ch.only != "":
		// Only a subscription to one run reads its events.
		ch.mark(id, eventsChanged)
	}
}

func (ch *changes) close() {
	ch.fw.Close()
	<-ch.done
	ch.owners.Close()
}
