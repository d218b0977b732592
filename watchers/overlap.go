package watchers

import (
	"fmt"
	"sort"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// overlaps is the overlap watcher's state: the files each worker with a
// change not landed yet has changed, and the pairs already reported. A
// worker is forgotten once its change is landed or removed (or, working
// in place, once it settles: its change is in the checkout then), so this
// holds no more than the changes still to land.
type overlaps struct {
	live  map[string]*changer        // by session id
	files map[string]map[string]bool // file key -> ids of the live workers changing it
	told  map[overlapPair]string     // a reported pair -> the session its alert was made for
}

// changer is a live worker that changed something (or reported a path).
type changer struct {
	id    string
	place place
	files map[string]bool // keys
}

// overlapPair is two sessions (a < b) and the file they both change.
type overlapPair struct{ a, b, key string }

func pairOf(x, y, key string) overlapPair {
	if x > y {
		x, y = y, x
	}
	return overlapPair{x, y, key}
}

// overlapStanding is the standing key of an overlap alert: a session may
// have one per other worker and file.
func overlapStanding(other, key string) string { return "overlap\x00" + other + "\x00" + key }

func newOverlaps() overlaps {
	return overlaps{live: map[string]*changer{}, files: map[string]map[string]bool{}, told: map[overlapPair]string{}}
}

// overlap takes in what a worker changed since its last update (its
// file_change events, and the files of the turns that ended, however the
// worker changed them: the supervisor lists what each turn's commit holds)
// and reports each file it shares with another worker of its repository
// whose change is not landed either, once per pair and file. A worker
// whose change is landed or removed is forgotten, and its pairs' alerts
// no longer stand.
func (w *Workers) overlap(st *worker, u watch.Update, now time.Time) []Alert {
	s := st.s
	if !w.cfg.Overlap.Enabled {
		return nil
	}
	if s.Legacy || !s.ChangeToLand() {
		w.forgetChanges(s.ID)
		// What its turns listed so far is landed: a follow-up that
		// reopens it starts afresh.
		st.filesTurns = len(s.Turns)
		return nil
	}
	c := w.ov.live[s.ID]
	var out []Alert
	note := func(key string, ok bool) {
		if ok {
			out = append(out, w.changed(s, c, key, now)...)
		}
	}
	for _, b := range u.Events {
		for _, ev := range b.Events {
			if ev.Type != record.EventFileChange {
				continue
			}
			for _, ch := range ev.Changes {
				if c == nil {
					c = w.changerOf(s)
				}
				note(c.place.key(ch.Path))
			}
		}
	}
	// Changes made by shell commands show only in the turn's files, when
	// it ends (the supervisor commits them then).
	for ; st.filesTurns < len(s.Turns) && s.Turns[st.filesTurns].EndedAt != nil; st.filesTurns++ {
		for _, f := range s.Turns[st.filesTurns].Files {
			if c == nil {
				c = w.changerOf(s)
			}
			note(c.place.fileKey(f))
		}
	}
	return out
}

func (w *Workers) changerOf(s *record.Session) *changer {
	c := &changer{id: s.ID, place: placeOf(s), files: map[string]bool{}}
	w.ov.live[s.ID] = c
	return c
}

// changed records that c (the worker of s) changes key, and reports the
// other live workers of its repository that change it too.
func (w *Workers) changed(s *record.Session, c *changer, key string, now time.Time) []Alert {
	if c.files[key] {
		return nil
	}
	c.files[key] = true
	ids := w.ov.files[key]
	if ids == nil {
		ids = map[string]bool{}
		w.ov.files[key] = ids
	}
	others := make([]string, 0, len(ids))
	for id := range ids {
		others = append(others, id)
	}
	sort.Strings(others) // alerts in a stable order when several share it
	ids[c.id] = true
	var out []Alert
	for _, id := range others {
		o := w.ov.live[id]
		pair := pairOf(c.id, id, key)
		if _, told := w.ov.told[pair]; told || o == nil || !sameRepo(o.place, c.place) {
			continue
		}
		a := alertFor(s, "overlap", Nudge, overlapReason(o, c, key), now)
		w.ov.told[pair] = s.ID
		w.standAs(overlapStanding(id, key), a)
		out = append(out, a)
	}
	return out
}

// forgetChanges drops a worker whose change landed or was removed: its files,
// and the standing alerts of the pairs it was in (whichever of the two
// they were made for).
func (w *Workers) forgetChanges(id string) {
	c := w.ov.live[id]
	if c == nil {
		return
	}
	delete(w.ov.live, id)
	for key := range c.files {
		ids := w.ov.files[key]
		delete(ids, id)
		for other := range ids {
			pair := pairOf(id, other, key)
			if made, ok := w.ov.told[pair]; ok {
				delete(w.ov.told, pair)
				if made == id {
					w.clear(id, overlapStanding(other, key))
				} else {
					w.clear(made, overlapStanding(id, key))
				}
			}
		}
		if len(ids) == 0 {
			delete(w.ov.files, key)
		}
	}
}

// sameRepo: two workers in worktrees are of one repository when they
// share its git dir. A worker in place has no git dir; sharing a key with
// it means changing the very same file on disk.
func sameRepo(a, b place) bool {
	return a.inPlace() || b.inPlace() || a.gitDir == b.gitDir
}

// overlapReason names both workers (first changed the file first) and the
// file, and what it will cost.
func overlapReason(first, second *changer, key string) string {
	in := second.place
	if !first.place.inPlace() {
		in = first.place // name the file relative to a repository when there is one
	}
	f := in.display(key)
	a, b := record.ShortID(first.id), record.ShortID(second.id)
	switch {
	case first.place.inPlace() && second.place.inPlace():
		return fmt.Sprintf("%s and %s both change %s, both in place: each may overwrite the other's edits", a, b, f)
	case first.place.inPlace():
		return fmt.Sprintf("%s and %s both change %s: %s edits it in place, so landing %s there may be refused or conflict", a, b, f, a, b)
	case second.place.inPlace():
		return fmt.Sprintf("%s and %s both change %s: %s edits it in place, so landing %s there may be refused or conflict", a, b, f, b, a)
	}
	return fmt.Sprintf("%s and %s both change %s: the second to land may conflict", a, b, f)
}
