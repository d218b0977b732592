package sessions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Change says what happened to one session since the last batch.
type Change struct {
	ID string
	// Meta: the record was created or replaced. Turns: a turn file grew or
	// appeared. Removed: the session is gone.
	Meta, Turns, Removed bool
}

// Debounce is how long a Watcher gathers file events into one batch: short
// enough that an appended event reaches a reader well within 200 ms, long
// enough that a burst of writes costs one reload.
const Debounce = 25 * time.Millisecond

// Watcher reports changes anywhere in the state directory: sessions that
// appear or disappear, records replaced, turn files appended to. It watches
// directories (the sessions dir, each session dir and its turns dir), so it
// sees files that do not exist yet, and coalesces events per session.
type Watcher struct {
	st     *Store
	fw     *fsnotify.Watcher
	out    chan []Change
	cancel context.CancelFunc
	done   chan struct{}
}

// Watch starts watching the state directory until ctx ends or Close.
func (m *Manager) Watch(ctx context.Context) (*Watcher, error) {
	if err := os.MkdirAll(m.st.sessionsDir(), dirPerm); err != nil {
		return nil, fmt.Errorf("watch %s: %w", m.st.Dir(), err)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if err := fw.Add(m.st.sessionsDir()); err != nil {
		fw.Close()
		return nil, fmt.Errorf("watch %s: %w", m.st.sessionsDir(), err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{st: m.st, fw: fw, out: make(chan []Change), cancel: cancel, done: make(chan struct{})}
	ids, _ := m.st.ids()
	for _, id := range ids {
		w.addSession(id)
	}
	go w.loop(ctx)
	return w, nil
}

// Changes delivers batches of changes. It is closed when the watcher stops.
func (w *Watcher) Changes() <-chan []Change { return w.out }

// Close stops the watcher and waits for its goroutine.
func (w *Watcher) Close() {
	w.cancel()
	<-w.done
}

// addSession watches a session dir and its turns dir. A failure (the
// system's watch limit) only costs that session its live updates.
func (w *Watcher) addSession(id string) {
	w.fw.Add(w.st.sessionDir(id))
	w.fw.Add(w.st.turnsDir(id))
}

func (w *Watcher) loop(ctx context.Context) {
	defer close(w.done)
	defer close(w.out)
	defer w.fw.Close()
	pending := map[string]*Change{}
	var order []string
	var timer <-chan time.Time
	var out chan []Change // nil until a batch is ready to send
	var batch []Change
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			c := w.classify(ev)
			if c == nil {
				continue
			}
			p, seen := pending[c.ID]
			if !seen {
				p = &Change{ID: c.ID}
				pending[c.ID] = p
				order = append(order, c.ID)
			}
			p.Meta, p.Turns, p.Removed = p.Meta || c.Meta, p.Turns || c.Turns, c.Removed || p.Removed && !c.Meta
			if timer == nil {
				timer = time.After(Debounce)
			}
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			// Events were lost (queue overflow): everything may have changed.
			ids, _ := w.st.ids()
			for _, id := range ids {
				if _, seen := pending[id]; !seen {
					pending[id] = &Change{ID: id}
					order = append(order, id)
				}
				pending[id].Meta, pending[id].Turns = true, true
			}
			if timer == nil {
				timer = time.After(Debounce)
			}
		case <-timer:
			timer = nil
			for _, id := range order {
				batch = append(batch, *pending[id])
			}
			pending, order, out = map[string]*Change{}, nil, w.out
		case out <- batch:
			batch, out = nil, nil
		}
	}
}

// classify maps a file event to the session it concerns.
func (w *Watcher) classify(ev fsnotify.Event) *Change {
	rel, err := filepath.Rel(w.st.sessionsDir(), ev.Name)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	id := parts[0]
	if validID(id) != nil || len(id) != 36 {
		return nil // temp and trash entries (".removing-…")
	}
	switch {
	case len(parts) == 1:
		if ev.Has(fsnotify.Create) {
			w.addSession(id)
			return &Change{ID: id, Meta: true, Turns: true}
		}
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			return &Change{ID: id, Removed: true}
		}
	case len(parts) == 2 && parts[1] == "meta.json":
		return &Change{ID: id, Meta: true}
	case len(parts) == 2 && parts[1] == "turns":
		if ev.Has(fsnotify.Create) {
			w.fw.Add(ev.Name)
			return &Change{ID: id, Turns: true}
		}
	case len(parts) == 3 && parts[1] == "turns" && strings.HasPrefix(parts[2], "turn_"):
		return &Change{ID: id, Turns: true}
	}
	return nil
}
