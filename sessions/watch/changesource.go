package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/runner"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// changeSource turns file events and process exits into a set of sessions
// to look at again. It watches directories (the sessions dir, session
// dirs, and the turns and inbox dirs of sessions that are not settled), so
// it sees files that do not exist yet; a settled session's files only
// change after its meta.json does, which its dir's watch sees. For every
// session, the dirs of settled sessions are not watched: sessions.gen's
// writers tell of their changes (gen; subscribe_settled.go), and without
// it every session dir is. Exits of owners come from pidfds. The set
// coalesces: a session changed a hundred times while the consumer was
// busy is one entry.
type changeSource struct {
	st *state.Store
	fw dirWatch
	// events and errs are fw's; nil while polling (openWatch).
	events  <-chan fsnotify.Event
	errs    <-chan error
	polling bool
	exits   *proc.ExitWatch
	only    map[string]bool // nil: every session
	// gen, for every session, tells when sessions.gen's writers are done;
	// nil when it cannot be watched: every session dir is, then.
	gen     *genWatch
	genLost <-chan struct{}

	mu      sync.Mutex
	order   []string
	dirty   map[string]bool
	inbox   map[string]bool
	deep    map[string]bool // sessions whose turns and inbox dirs are watched
	dirs    map[string]bool // with gen: the session dirs watched
	missing bool            // the sessions dir does not exist yet
	resync  bool            // events may have been missed: look at everything
	genSeen bool            // sessions.gen was closed by a writer
	// polled are the live sessions whose supervisors run under another
	// runner: no pidfd tells of their end here, and their writes, made on
	// another host of a shared file system, may raise no inotify event
	// here. They are looked at again every JobPoll; repoll tells the loop
	// the set changed.
	polled map[string]bool
	repoll chan struct{}
	c      chan struct{}
	stop   chan struct{} // closed by close
	done   chan struct{}
}

func newChangeSource(st *state.Store, only map[string]bool) (*changeSource, error) {
	fw, events, errs, polling, err := openWatch()
	if err != nil {
		return nil, err
	}
	exits, err := proc.NewExitWatch()
	if err != nil {
		fw.Close()
		return nil, err
	}
	cs := &changeSource{st: st, fw: fw, events: events, errs: errs, polling: polling, exits: exits, only: only, dirty: map[string]bool{},
		inbox: map[string]bool{}, deep: map[string]bool{}, dirs: map[string]bool{}, polled: map[string]bool{},
		repoll: make(chan struct{}, 1), c: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if only == nil {
		// A listing makes sessions.gen where there is none yet (in an
		// existing state dir that can be written); a watch on it spares
		// one on every settled session's dir.
		if _, unlock, _ := st.Generation(); unlock != nil {
			unlock()
		}
		if gw, err := newGenWatch(st.GenPath()); err == nil {
			cs.gen, cs.genLost = gw, gw.Lost()
		}
	}
	if err := cs.watchRoot(); err != nil {
		cs.closeGen()
		fw.Close()
		exits.Close()
		return nil, err
	}
	go cs.loop()
	return cs, nil
}

func (cs *changeSource) closeGen() {
	cs.mu.Lock()
	gw := cs.gen
	cs.gen = nil
	cs.mu.Unlock()
	if gw != nil {
		gw.Close()
	}
}

// watchingGen says whether the settled sessions are followed through
// sessions.gen rather than their dirs.
func (cs *changeSource) watchingGen() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.gen != nil
}

// watchRoot watches the sessions dir, or while it does not exist, the
// nearest existing directory above it, to see it being created. Nothing is
// created: read-only commands leave a missing state dir missing.
func (cs *changeSource) watchRoot() error {
	if cs.only != nil {
		// A subscription to some sessions (which exist: their ids were
		// resolved) watches their directories alone: a watch on the
		// sessions dir costs the kernel a walk of every entry of it that
		// it holds in memory (100,000 in a big state dir), and a session
		// dir's own watch sees it renamed away or removed.
		for id := range cs.only {
			cs.addSession(id)
		}
		return nil
	}
	if err := cs.fw.Add(cs.st.SessionsDir()); err == nil {
		came := cs.missing
		cs.missing = false
		if cs.watchingGen() && !came {
			return nil // the subscription watches the dirs it has to
		}
		// The sessions made before this watch existed (all of them, in a
		// state dir that was missing) are watched: each is looked at once.
		ids, _ := cs.st.Ids()
		for _, id := range ids {
			cs.addSession(id)
		}
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	cs.missing = true
	for dir := cs.st.Dir(); ; dir = filepath.Dir(dir) {
		if err := cs.fw.Add(dir); err == nil {
			// Its parent too: a directory removed while it is open
			// somewhere tells its own watch only once it is closed, and
			// one made again in its place is another; the parent sees both.
			if up := filepath.Dir(dir); up != dir {
				cs.fw.Add(up)
			}
			// The next dir down may have been made before this watch
			// existed, which then never sees it: look again.
			if next := nextDown(dir, cs.st.SessionsDir()); next != "" {
				if _, err := os.Stat(next); err == nil {
					return cs.watchRoot()
				}
			}
			return nil
		} else if !errors.Is(err, fs.ErrNotExist) || dir == filepath.Dir(dir) {
			return err
		}
	}
}

// nextDown is the directory below dir on the way to path, "" if none.
func nextDown(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.Join(dir, strings.Split(rel, string(filepath.Separator))[0])
}

func (cs *changeSource) wanted(id string) bool { return cs.only == nil || cs.only[id] }

// addSession watches a session dir. A failure (the system's watch limit)
// only costs that session its live updates.
func (cs *changeSource) addSession(id string) {
	if !cs.wanted(id) {
		return
	}
	if cs.watchingGen() {
		cs.watchDir(id, true)
		return
	}
	cs.fw.Add(cs.st.SessionDir(id))
}

// watchDir watches a session's dir, or stops, while the settled sessions
// are followed through sessions.gen: a session that is not settled (or
// new, or whose record cannot be read) is watched, a settled one is not.
// Otherwise every session dir is watched, and this does nothing.
func (cs *changeSource) watchDir(id string, on bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.gen == nil || !cs.wanted(id) || cs.dirs[id] == on {
		return
	}
	if !on {
		cs.fw.Remove(cs.st.SessionDir(id))
		delete(cs.dirs, id)
		return
	}
	if cs.fw.Add(cs.st.SessionDir(id)) == nil {
		cs.dirs[id] = true
	}
}

// watchEveryDir gives up on sessions.gen (it went): every session dir is
// watched from now on, and everything looked at again.
func (cs *changeSource) watchEveryDir() {
	cs.closeGen()
	cs.mu.Lock()
	clear(cs.dirs)
	cs.mu.Unlock()
	if !cs.missing {
		ids, _ := cs.st.Ids()
		for _, id := range ids {
			cs.addSession(id)
		}
	}
	cs.markAll()
}

// takeGen reports, once, whether a writer of sessions.gen was done since.
func (cs *changeSource) takeGen() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	g := cs.genSeen
	cs.genSeen = false
	return g
}

// settled adds or drops the watches on a session's turns and inbox dirs.
func (cs *changeSource) settled(id string, settled bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.deep[id] == !settled {
		return
	}
	for _, d := range []string{cs.st.TurnsDir(id), cs.st.InboxDir(id)} {
		if settled {
			cs.fw.Remove(d)
		} else {
			cs.fw.Add(d)
		}
	}
	cs.deep[id] = !settled
	if !settled {
		// Whatever was written before the watches existed is read now.
		cs.markLocked(id, true)
	}
}

func (cs *changeSource) forget(id string) {
	cs.exits.Remove(id)
	cs.poll(id, false)
	cs.mu.Lock()
	delete(cs.deep, id)
	cs.mu.Unlock()
	cs.watchDir(id, false)
}

// poll adds a session to those looked at every JobPoll, or drops it.
func (cs *changeSource) poll(id string, on bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.polled[id] == on {
		return
	}
	if on {
		cs.polled[id] = true
	} else {
		delete(cs.polled, id)
	}
	select {
	case cs.repoll <- struct{}{}:
	default:
	}
}

// markPolled marks every polled session; it reports whether any is.
func (cs *changeSource) markPolled() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for id := range cs.polled {
		cs.markLocked(id, true)
	}
	return len(cs.polled) > 0
}

func (cs *changeSource) mark(id string, inbox bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.markLocked(id, inbox)
}

func (cs *changeSource) markLocked(id string, inbox bool) {
	if !cs.dirty[id] {
		cs.dirty[id] = true
		cs.order = append(cs.order, id)
	}
	cs.inbox[id] = cs.inbox[id] || inbox
	select {
	case cs.c <- struct{}{}:
	default:
	}
}

// markAll asks the consumer to look at every session it knows and every
// session there is: events may have been missed.
func (cs *changeSource) markAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.resync = true
	select {
	case cs.c <- struct{}{}:
	default:
	}
}

// takeResync reports, once, whether everything must be looked at again.
func (cs *changeSource) takeResync() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	r := cs.resync
	cs.resync = false
	return r
}

// wake delivers a value when something is dirty.
func (cs *changeSource) wake() <-chan struct{} { return cs.c }

// take returns the dirty sessions in the order they changed.
func (cs *changeSource) take() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := cs.order
	cs.order = nil
	clear(cs.dirty)
	return out
}

// inboxChanged reports, once, whether a session's inbox changed.
func (cs *changeSource) inboxChanged(id string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	ch := cs.inbox[id]
	delete(cs.inbox, id)
	return ch
}

func (cs *changeSource) loop() {
	defer close(cs.done)
	// The ticker runs only while a session is polled: an idle dashboard
	// wakes for nothing.
	var tick <-chan time.Time
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	var genC <-chan struct{}
	if cs.gen != nil {
		genC = cs.gen.C()
	}
	var pollC <-chan time.Time
	if cs.polling {
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		pollC = t.C
	}
	for {
		select {
		case <-cs.stop:
			return
		case <-pollC:
			cs.markAll()
		case <-genC:
			cs.mu.Lock()
			cs.genSeen = true
			cs.mu.Unlock()
			select {
			case cs.c <- struct{}{}:
			default:
			}
		case <-cs.genLost:
			genC, cs.genLost = nil, nil
			cs.watchEveryDir()
		case <-cs.repoll:
			cs.mu.Lock()
			some := len(cs.polled) > 0
			cs.mu.Unlock()
			switch {
			case some && ticker == nil:
				ticker = time.NewTicker(runner.JobPoll)
				tick = ticker.C
			case !some && ticker != nil:
				ticker.Stop()
				ticker, tick = nil, nil
			}
		case <-tick:
			cs.markPolled()
		case ev, ok := <-cs.events:
			if !ok {
				return
			}
			cs.onEvent(ev)
		case _, ok := <-cs.errs:
			if !ok {
				return
			}
			// Events were lost (queue overflow): everything may have changed.
			cs.markAll()
		case <-cs.exits.C():
			for _, id := range cs.exits.Drain() {
				cs.mark(id, false)
			}
		}
	}
}

func (cs *changeSource) onEvent(ev fsnotify.Event) {
	if cs.missing {
		// Something above the sessions dir changed: it may exist now. What
		// happened in it before its watch existed is unknown.
		if cs.watchRoot() == nil && !cs.missing {
			cs.markAll()
		}
		return
	}
	if ev.Name == cs.st.SessionsDir() && ev.Has(fsnotify.Remove|fsnotify.Rename) && cs.only == nil {
		// The sessions dir itself went (its state dir removed): watch for
		// it to come back, as when it was missing, and look again at
		// everything, which is gone.
		cs.fw.Remove(ev.Name)
		cs.missing = true
		if cs.watchRoot() == nil {
			cs.markAll()
		}
		return
	}
	rel, err := filepath.Rel(cs.st.SessionsDir(), ev.Name)
	if err != nil || strings.HasPrefix(rel, "..") {
		return
	}
	parts := strings.Split(rel, string(filepath.Separator))
	id := parts[0]
	if store.ValidID(id) != nil || len(id) != 36 || !cs.wanted(id) {
		return // temp and trash entries (".new-…", ".removing-…")
	}
	switch {
	case len(parts) == 1:
		if ev.Has(fsnotify.Create) {
			cs.addSession(id)
		}
		cs.mark(id, true)
	case len(parts) == 2 && parts[1] == "meta.json":
		cs.mark(id, false)
	case len(parts) >= 2 && parts[1] == "inbox":
		cs.mark(id, true)
	case len(parts) == 3 && parts[1] == "turns" && strings.HasPrefix(parts[2], "turn_"):
		cs.mark(id, false)
	}
}

func (cs *changeSource) close() {
	close(cs.stop)
	cs.fw.Close()
	<-cs.done
	cs.closeGen()
	cs.exits.Close()
}
