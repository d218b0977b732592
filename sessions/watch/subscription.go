package watch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// Debounce is how long a subscription gathers file events into one batch:
// short enough that an appended event reaches a reader well within 200 ms,
// long enough that a burst of writes costs one reload.
const Debounce = 25 * time.Millisecond

// SubscribeOptions choose what a subscription delivers.
type SubscribeOptions struct {
	// IDs are the sessions to follow (ids or unique prefixes); none means
	// every session, including those created later.
	IDs []string
	// Filter keeps only sessions that match it (its Limit is ignored). A
	// session that stops matching is reported once more, then dropped.
	Filter listing.Options
	// Events delivers what the agents write, turn by turn, as it is written.
	Events bool
	// Window bounds, with Events, how much of each turn file is read when it
	// is first seen (its last Window bytes), and of what a running turn
	// grew by between two updates (a StepSkipped says what was not read);
	// 0 reads turn files whole.
	Window int64
	// FromTurn, with Events, skips turns before it; OnlyTurn reads only
	// that turn.
	FromTurn, OnlyTurn int
	// Listing, for a subscription to every session without Events or a
	// Filter, delivers the settled sessions the listing cache holds as
	// they are in one Listing, the first update's, rather than an update
	// each: a front end of 100,000 sessions counts and shows them from it
	// and reads a summary when it shows one. The other sessions (those
	// not settled, and those the cache is behind on) follow in updates of
	// their own, their records whole; later updates are changes, of any
	// session, as usual. The Listing is closed when the subscription ends.
	Listing bool
}

// Update is one change of one session. The first update of each session
// (Initial) is its state when the subscription started or when the session
// appeared; later ones say what changed since the one before. A
// subscription to every session without Events starts from the listing's
// summaries (records without their turns, as List gives them); its later
// updates carry whole records.
type Update struct {
	ID string
	// Session is the record as it is now; nil when Removed, or when Err
	// says it cannot be read.
	Session *record.Session
	Initial bool
	Removed bool
	// Prev is the status of the previous update ("" for the first).
	Prev record.Status
	// Started and Ended are the turns that started and ended since the
	// previous update, in order: no turn's end is lost, however quickly the
	// next one starts.
	Started, Ended []record.Turn
	// Events, with SubscribeOptions.Events, is what the agent wrote since
	// the previous update, per turn.
	Events []TurnEvents
	// More, with Events and no Window, says the turn files hold more than
	// this update read (an update takes a bounded stretch of each): the
	// next update, which follows at once, goes on with it. A turn is in
	// Ended only in the update that read the last of its events.
	More bool
	// Inbox is the follow-ups that were sent or changed state.
	Inbox []record.InboxEntry
	// Err is set when the record cannot be read (a *RecordError).
	Err error
	// Synced marks the last update of the initial state: from then on,
	// updates are changes. With no session to report at first, it comes
	// alone, in an update with no ID.
	Synced bool
	// Listing, with SubscribeOptions.Listing, is the first update's (it
	// has no ID): the settled sessions as the subscription found them.
	// Until a session of it has an update of its own, the listing says
	// what it is; Pending is how many sessions follow in initial updates
	// of their own (a few of them may turn out gone or unreadable).
	Listing *listing.Listing
	Pending int
}

// StatusChanged reports whether the status differs from the previous update.
func (u Update) StatusChanged() bool {
	return u.Initial || u.Prev != "" && u.Session != nil && u.Session.Status() != u.Prev
}

// Subscription delivers Updates in order. Delivery waits for the consumer
// (backpressure); meanwhile changes coalesce, and nothing is lost: a
// session's events are read from where the last update left off, and every
// turn that started or ended is reported.
type Subscription struct {
	m      Source
	opt    SubscribeOptions
	out    chan Update
	src    *changeSource
	cancel context.CancelFunc
	done   chan struct{}
	err    error

	known map[string]*subState
	ids   map[string]bool // the sessions asked for; nil: all
	// behind is the sessions whose last update left events to read: they
	// are read again at once, without waiting for their files to change.
	behind map[string]bool
	// settled, for every session, is the settled sessions whose dirs are
	// not watched; gen the generation they were last checked at (genOK:
	// one was read).
	settled *listing.SettledSet
	gen     uint64
	genOK   bool
	// check says the settled sessions' records are to be checked against
	// the cache once the first state is delivered (openListing).
	check bool
}

// subState is what the subscription last told about one session.
type subState struct {
	status record.Status
	runner string // what the runner said of its job (RunnerState)
	turns  int
	ended  int // turns 1..ended have been reported ended
	stamp  time.Time
	errMsg string
	inbox  map[string]record.InboxState
	owner  proc.Ref
	traj   *Trajectory
}

// Subscribe starts delivering updates until ctx ends or Close is called.
func Subscribe(ctx context.Context, m Source, opt SubscribeOptions) (*Subscription, error) {
	if opt.Listing && (len(opt.IDs) > 0 || opt.Events || opt.Filter != (listing.Options{})) {
		return nil, errors.New("subscribe: a listing is of every session, without events or a filter")
	}
	sub := &Subscription{m: m, opt: opt, out: make(chan Update), done: make(chan struct{}), known: map[string]*subState{},
		behind: map[string]bool{}}
	if len(opt.IDs) > 0 {
		sub.ids = map[string]bool{}
		for _, p := range opt.IDs {
			id, err := listing.Resolve(m.Store(), p)
			if err != nil {
				return nil, err
			}
			sub.ids[id] = true
		}
	}
	src, err := newChangeSource(m.Store(), sub.ids)
	if err != nil {
		return nil, err
	}
	sub.src = src
	ctx, sub.cancel = context.WithCancel(ctx)
	go sub.run(ctx)
	return sub, nil
}

// C delivers the updates. It is closed when the subscription ends; Err
// then says why, if not because it was closed.
func (s *Subscription) C() <-chan Update { return s.out }

// Err is why the subscription ended early, once C is closed.
func (s *Subscription) Err() error { return s.err }

// Close ends the subscription and waits for its goroutines.
func (s *Subscription) Close() {
	s.cancel()
	<-s.done
}

func (s *Subscription) run(ctx context.Context) {
	defer close(s.done)
	defer close(s.out)
	defer s.src.close()
	defer func() {
		for _, st := range s.known {
			if st.traj != nil {
				st.traj.Close()
			}
		}
		if s.settled != nil {
			s.settled.Listing().Close()
		}
	}()
	initial, err := s.initial(ctx)
	if err != nil {
		s.err = err
		return
	}
	var held *Update // the last initial update is sent marked Synced
	for _, u := range initial {
		if held != nil && !s.send(ctx, *held) {
			return
		}
		held = &u
	}
	if held == nil {
		held = &Update{}
	}
	held.Synced = true
	if !s.send(ctx, *held) {
		return
	}
	if s.check {
		// What the cache said, trusted for the first state, is checked
		// now: a record changed behind zwarm's back is a change.
		current := s.m.Judge(nil)
		for _, id := range s.settled.Changed(s.m.Store().SessionsDir()) {
			if !s.emit(ctx, id, current) {
				return
			}
		}
	}
	for {
		if len(s.behind) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.src.wake():
			}
			// Let a burst of writes settle into one batch.
			select {
			case <-ctx.Done():
				return
			case <-time.After(Debounce):
			}
		}
		dirty := s.dirty()
		if s.src.takeGen() {
			dirty = appendNew(dirty, s.settledChanged())
		}
		behind := make([]string, 0, len(s.behind))
		for id := range s.behind {
			behind = append(behind, id)
		}
		clear(s.behind)
		dirty = appendNew(dirty, behind)
		current := s.m.Judge(dirty)
		for _, id := range dirty {
			if !s.emit(ctx, id, current) {
				return
			}
		}
	}
}

// emit builds the update of one session and delivers it if anything
// changed. It reports false when the subscription is over.
func (s *Subscription) emit(ctx context.Context, id string, current func(*record.Session) *record.Session) bool {
	u, ok := s.build(ctx, id, current)
	if !ok {
		return true
	}
	return s.send(ctx, u)
}

func (s *Subscription) send(ctx context.Context, u Update) bool {
	select {
	case s.out <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Subscription) build(ctx context.Context, id string, current func(*record.Session) *record.Session) (Update, bool) {
	prev, seen := s.known[id]
	if !seen {
		prev, seen = s.listedState(id)
	}
	u := Update{ID: id, Initial: !seen}
	// The file's identity before the record: a change in between is one
	// more look later, never one missed.
	key, keyOK := s.m.Store().MetaKey(id)
	rec, err := s.m.Store().Load(id)
	// A directory without a record is no session to watch: one being made
	// by hand, or one whose record was removed, which its supervisor
	// stops (listings name it as broken).
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, state.ErrNoRecord) {
		return s.gone(u, prev, seen, errors.Is(err, state.ErrNoRecord))
	}
	if !seen {
		prev = &subState{inbox: map[string]record.InboxState{}}
	}
	if err != nil {
		s.watchUnsettled(id)
		re := &state.RecordError{ID: id, Err: err}
		errors.As(err, &re)
		u.Err = re
		if seen && prev.errMsg == u.Err.Error() {
			return u, false
		}
		prev.errMsg = u.Err.Error()
		s.known[id] = prev
		return u, true
	}
	prev.errMsg = ""
	cur := current(rec)
	if s.settled != nil {
		// Python zwarm records may change without a word: watched.
		if cur.Settled() && !cur.Legacy && keyOK {
			s.settled.Add(id, key)
			s.src.watchDir(id, false)
		} else {
			s.watchUnsettled(id)
		}
	}
	if !s.opt.Filter.Match(cur) {
		if !seen {
			return u, false
		}
	}
	u.Session, u.Prev = cur, prev.status
	s.known[id] = prev
	if s.opt.Events {
		s.readEvents(ctx, &u, prev, cur)
	}
	s.diffTurns(&u, prev, cur)
	if s.src.inboxChanged(id) || !seen {
		s.diffInbox(&u, prev, id)
	}
	s.watchOwner(id, prev, cur)
	// A job's state in its runner's words changes with no write to its
	// record (queued again, the controller silent): it is news too.
	changed := !seen || cur.Status() != prev.status || len(u.Started)+len(u.Ended)+len(u.Events)+len(u.Inbox) > 0 ||
		!cur.UpdatedAt.Equal(prev.stamp) || u.Err != nil || cur.RunnerState != prev.runner
	prev.status, prev.turns, prev.stamp, prev.runner = cur.Status(), len(cur.Turns), cur.UpdatedAt, cur.RunnerState
	return u, changed
}

// diffTurns finds the turns that started and ended since the last update.
func (s *Subscription) diffTurns(u *Update, prev *subState, cur *record.Session) {
	for i := prev.turns; i < len(cur.Turns); i++ {
		u.Started = append(u.Started, cur.Turns[i])
	}
	for i := prev.ended; i < len(cur.Turns) && cur.Turns[i].EndedAt != nil; i++ {
		if prev.traj != nil && prev.traj.behindOn(cur.Turns[i].N) {
			break // its end after the rest of its events
		}
		u.Ended = append(u.Ended, cur.Turns[i])
		prev.ended = i + 1
	}
}

func (s *Subscription) diffInbox(u *Update, prev *subState, id string) {
	entries, err := s.m.Store().Inbox(id)
	if err != nil {
		u.Err = err
		return
	}
	for _, e := range entries {
		if prev.inbox[e.ID] != e.State {
			prev.inbox[e.ID] = e.State
			u.Inbox = append(u.Inbox, e)
		}
	}
}

// watchOwner follows the liveness of an unsettled session's owner, so a
// supervisor that dies without a word is noticed at once.
func (s *Subscription) watchOwner(id string, prev *subState, cur *record.Session) {
	if state.RunnerJudges(cur) && !cur.Settled() {
		// Its supervisor runs under another runner: no pid of it means
		// anything here. It is polled, and its runner judges it.
		if prev.owner.PID != 0 {
			s.src.exits.Remove(id)
			prev.owner = proc.Ref{}
		}
		s.src.settled(id, false)
		s.src.poll(id, true)
		return
	}
	s.src.poll(id, false)
	switch {
	case cur.Settled() || cur.Owner == nil:
		if prev.owner.PID != 0 {
			s.src.exits.Remove(id)
			prev.owner = proc.Ref{}
		}
		s.src.settled(id, true)
	case *cur.Owner != prev.owner:
		prev.owner = *cur.Owner
		s.src.exits.Add(id, cur.Owner)
		s.src.settled(id, false)
	}
}

// gone is the update for a session whose directory holds no record (one
// being made by hand, or one whose record was removed, which its
// supervisor stops: listings name it as broken): it is watched for a
// record to come (noRecord) or not at all, and reported removed if it was
// seen.
func (s *Subscription) gone(u Update, prev *subState, seen, noRecord bool) (Update, bool) {
	id := u.ID
	if s.settled != nil {
		s.settled.Drop(id)
	}
	s.src.watchDir(id, noRecord)
	if !seen {
		return u, false
	}
	if prev.traj != nil {
		prev.traj.Close()
	}
	delete(s.known, id)
	s.src.forget(id)
	u.Removed, u.Prev = true, prev.status
	return u, true
}

// readEvents reads into u the events of cur's turns that the session's
// trajectory has not delivered yet.
func (s *Subscription) readEvents(ctx context.Context, u *Update, prev *subState, cur *record.Session) {
	id := u.ID
	if prev.traj == nil {
		prev.traj = NewTrajectory(s.m, id, TrajectoryOptions{Window: s.opt.Window, From: s.opt.FromTurn, Only: s.opt.OnlyTurn})
	}
	batches, err := prev.traj.read(ctx, cur)
	if err != nil {
		u.Err = fmt.Errorf("read the turns of %s: %w", store.ShortID(id), err)
	}
	u.Events = batches
	if u.More = prev.traj.Behind(); u.More {
		s.behind[id] = true
	}
}
