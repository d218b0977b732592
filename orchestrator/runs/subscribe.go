package runs

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
)

// SubscribeOptions say what a subscription follows.
type SubscribeOptions struct {
	// Run, a run's full id, limits the subscription to that run and
	// delivers its events too; "" follows the record of every run.
	Run string
	// Window bounds how much of events.jsonl is read at first: its newest
	// part. 0 reads it all.
	Window int64
}

// Update is what changed in one run.
type Update struct {
	ID string
	// Record is the run as it truly is (a run whose process died reads
	// interrupted); nil when only events arrived, or when Removed. It
	// never runs ahead of Events: every event written before the record
	// was read is in this update or an earlier one.
	Record  *Record
	Removed bool
	// Events are those appended since the last update (with
	// SubscribeOptions.Run).
	Events []Event
	// Skipped is how many bytes at the start of events.jsonl were left
	// unread (SubscribeOptions.Window).
	Skipped int64
	// Reset says events.jsonl was replaced: Events start over.
	Reset bool
	Err   error
	// Synced marks the last update of the first load: every run there was
	// has been delivered. With no runs it comes alone, with no ID.
	Synced bool
}

// Subscription delivers updates in the order they happened, with
// backpressure: the subscription reads no further while an update waits.
type Subscription struct {
	c      chan Update
	cancel context.CancelFunc
	done   chan struct{}
	ch     *changes

	mu  sync.Mutex
	err error
}

// Subscribe follows the runs of a state dir until ctx ends or Close:
// every run's record as it changes and, for one run, its events as they
// are appended to events.jsonl. It wakes on file events (the runs dir and
// each run's dir) and on the exit of a run's owner process (a pidfd),
// never on a timer: an idle reader stays asleep. The reading happens on
// the subscription's goroutine; the reader only receives updates.
func Subscribe(ctx context.Context, stateDir string, opt SubscribeOptions) (*Subscription, error) {
	ch, err := newChanges(stateDir, opt.Run)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Subscription{c: make(chan Update), cancel: cancel, done: make(chan struct{}), ch: ch}
	r := &reader{stateDir: stateDir, opt: opt, ch: ch, runs: map[string]*runState{}}
	go func() {
		defer close(s.done)
		defer close(s.c)
		if err := r.run(ctx, s.c); err != nil && ctx.Err() == nil {
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// C delivers the updates; it is closed when the subscription ends.
func (s *Subscription) C() <-chan Update { return s.c }

// Err is why the subscription ended early, if it did.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription and waits for its goroutines.
func (s *Subscription) Close() {
	s.cancel()
	<-s.done
	s.ch.close()
}

// reader reads what changed and delivers it; it runs on the
// subscription's goroutine.
type reader struct {
	stateDir string
	opt      SubscribeOptions
	ch       *changes
	runs     map[string]*runState
}

type runState struct {
	tail *tail // the events, when they are delivered
}

func (r *reader) run(ctx context.Context, out chan<- Update) error {
	send := func(u Update) bool {
		select {
		case out <- u:
			return true
		case <-ctx.Done():
			return false
		}
	}
	// The first load: every run, then the mark that it is complete.
	var first []Update
	for _, id := range r.ch.ids() {
		if u, ok := r.read(id, recordChanged|eventsChanged); ok {
			first = append(first, u)
		}
	}
	if len(first) == 0 {
		first = append(first, Update{})
	}
	first[len(first)-1].Synced = true
	for _, u := range first {
		if !send(u) {
			return nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.ch.wake():
		}
		ids, what, resync := r.ch.take()
		if resync {
			ids, what = r.everything(ids, what)
		}
		for _, id := range ids {
			if u, ok := r.read(id, what[id]); ok && !send(u) {
				return nil
			}
		}
	}
}

// everything adds every run there is and every run known to what changed.
func (r *reader) everything(ids []string, what map[string]int) ([]string, map[string]int) {
	add := func(id string) {
		if what[id] == 0 {
			ids = append(ids, id)
		}
		what[id] = recordChanged | eventsChanged
	}
	for _, id := range r.ch.ids() {
		add(id)
	}
	for id := range r.runs {
		add(id)
	}
	return ids, what
}

// read reads what changed in run id; ok is false when there is nothing
// to say (a run whose run.json is not written yet).
func (r *reader) read(id string, what int) (Update, bool) {
	u := Update{ID: id}
	st := r.runs[id]
	if what&recordChanged != 0 {
		rec, err := LoadRecord(r.stateDir, id)
		switch {
		case errors.Is(err, ErrNoRun):
			// Its dir is gone: the run was removed.
			r.ch.owners.Remove(id)
			if st == nil {
				return u, false
			}
			delete(r.runs, id)
			return Update{ID: id, Removed: true}, true
		case errors.Is(err, fs.ErrNotExist):
			// Created, run.json not written yet: its creation is the
			// next event.
			return u, false
		case err != nil:
			u.Err = err
			return u, true
		}
		u.Record = rec
		if rec.Status.Live() {
			r.ch.owners.Add(id, rec.Owner)
		} else {
			r.ch.owners.Remove(id)
		}
		if st == nil {
			st = &runState{}
			if id == r.opt.Run {
				st.tail = &tail{path: filepath.Join(RunDir(r.stateDir, id), EventsFile), window: r.opt.Window}
			}
			r.runs[id] = st
		}
		// The events are read after the record, always: a run writes an
		// event before the record that follows from it, so the update
		// holds every event the record has seen, whichever notification
		// (the events file's, or the owner's exit) woke the reader first.
		what |= eventsChanged
	}
	if st == nil {
		return u, false // events of a run whose record is not readable yet
	}
	if what&eventsChanged != 0 && st.tail != nil {
		got, err := st.tail.read()
		if err != nil {
			u.Err = err
		}
		u.Events, u.Skipped, u.Reset = got.events, got.skipped, got.reset
	}
	if u.Record == nil && len(u.Events) == 0 && !u.Reset && u.Err == nil {
		return u, false
	}
	return u, true
}
