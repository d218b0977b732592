package watch

import (
	"context"
	"fmt"
	"sort"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// Step is one item of a session's story in the order it happened: a turn
// starting, one event of it, or the turn ending (with how it ended).
type Step struct {
	Kind  StepKind
	Turn  record.Turn
	Event record.Event // for StepEvent
	// Skipped, for StepTurnStarted, is how many bytes at the start of the
	// turn file were not read (a window smaller than the file); for
	// StepSkipped, how many right before the steps that follow.
	Skipped int64
}

// StepKind says what a Step is.
type StepKind int

const (
	StepTurnStarted StepKind = iota
	StepEvent
	StepTurnEnded
	// StepSkipped: a running turn grew by more than the window since the
	// previous read; what it printed meanwhile, but the last window, was
	// not read (only with a Window).
	StepSkipped
)

// Timeline orders what an update reports turn by turn: each turn's start,
// its events, then its end, so a turn's end is never shown under the next
// turn, however they were batched.
func (u Update) Timeline() []Step {
	type turnItems struct {
		batch *TurnEvents
		ended *record.Turn
	}
	by := map[int]*turnItems{}
	get := func(n int) *turnItems {
		if by[n] == nil {
			by[n] = &turnItems{}
		}
		return by[n]
	}
	for i := range u.Events {
		get(u.Events[i].Turn.N).batch = &u.Events[i]
	}
	for i := range u.Ended {
		get(u.Ended[i].N).ended = &u.Ended[i]
	}
	ns := make([]int, 0, len(by))
	for n := range by {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	size := 0
	for _, b := range u.Events {
		size += len(b.Events) + 2
	}
	out := make([]Step, 0, size+len(u.Ended))
	for _, n := range ns {
		it := by[n]
		if b := it.batch; b != nil {
			if b.First {
				out = append(out, Step{Kind: StepTurnStarted, Turn: b.Turn, Skipped: b.Skipped})
			} else if b.Skipped > 0 {
				out = append(out, Step{Kind: StepSkipped, Turn: b.Turn, Skipped: b.Skipped})
			}
			for _, ev := range b.Events {
				out = append(out, Step{Kind: StepEvent, Turn: b.Turn, Event: ev})
			}
		}
		if it.ended != nil {
			out = append(out, Step{Kind: StepTurnEnded, Turn: *it.ended})
		}
	}
	return out
}

// FollowOptions chooses what Follow reads.
type FollowOptions struct {
	// From is the first turn to read (1 if zero); Only, if set, the only one.
	From, Only int
	// Live keeps following new output and new turns until the session has
	// settled; otherwise Follow returns once it has read what exists.
	Live bool
	// Window bounds how much of each turn file is read (its last Window
	// bytes); 0 reads them whole.
	Window int64
	// OnUpdate, if set, sees each update before its steps (for progress).
	OnUpdate func(Update)
}

// Follow calls fn with the session's steps in order, as the agent writes
// them. Live, it is driven by the subscription (appends reach fn without
// polling) and follows follow-up turns too, until the session settles. A
// turn that does not exist is an error that says which turns do.
func Follow(ctx context.Context, m Source, idOrPrefix string, opt FollowOptions, fn func(Step)) error {
	id, err := listing.Resolve(m.Store(), idOrPrefix)
	if err != nil {
		return err
	}
	s, err := m.Get(ctx, id)
	if err != nil {
		return err
	}
	if opt.Only > 0 && opt.Only > turnCount(m, s) && (!opt.Live || s.Settled()) {
		return config.Invalidf("session %s has no turn %d (it has %d)", store.ShortID(id), opt.Only, turnCount(m, s))
	}
	sub, err := Subscribe(ctx, m, SubscribeOptions{IDs: []string{id}, Events: true, Window: opt.Window,
		FromTurn: opt.From, OnlyTurn: opt.Only})
	if err != nil {
		return err
	}
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u, ok := <-sub.C():
			if !ok {
				if err := sub.Err(); err != nil {
					return err
				}
				return ctx.Err()
			}
			if u.Removed {
				return fmt.Errorf("follow %s: %w (it was removed)", store.ShortID(id), store.ErrNotFound)
			}
			if u.Err != nil {
				return fmt.Errorf("follow %s: %w", store.ShortID(id), u.Err)
			}
			if u.Session == nil {
				continue
			}
			if opt.OnUpdate != nil {
				opt.OnUpdate(u)
			}
			for _, st := range u.Timeline() {
				if st.Turn.N >= opt.From && (opt.Only == 0 || st.Turn.N == opt.Only) {
					fn(st)
				}
			}
			if u.More {
				continue // the rest of what the turn files hold comes next
			}
			if !opt.Live || u.Session.Settled() || opt.Only > 0 && opt.Only <= len(u.Session.Turns) && u.Session.Turns[opt.Only-1].EndedAt != nil {
				return nil
			}
		}
	}
}

// turnCount is how many turns a session has, the Python zwarm's included.
func turnCount(m Source, s *record.Session) int {
	if s.Legacy {
		return len(state.LegacyTurns(m.Store().TurnsDir(s.ID), s))
	}
	return len(s.Turns)
}
