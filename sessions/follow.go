package sessions

import (
	"context"
	"fmt"
	"time"
)

// FollowOptions chooses what Follow reads.
type FollowOptions struct {
	// From is the first turn to read (1 if zero); Only, if set, the only one.
	From, Only int
	// Live keeps following new output and new turns until the session has
	// finished; otherwise Follow returns once it has read what exists.
	Live bool
}

// Follow calls onTurn when a turn begins and onEvent for each of its events,
// as the agent writes them. Live, it is driven by file events (appends reach
// onEvent without polling) and follows follow-up turns too.
func (m *Manager) Follow(ctx context.Context, idOrPrefix string, opt FollowOptions, onTurn func(Turn), onEvent func(Turn, Event)) error {
	id, err := m.st.resolve(idOrPrefix)
	if err != nil {
		return err
	}
	var wake <-chan struct{}
	var tick <-chan time.Time
	if opt.Live {
		w, err := watchDirs(m.st.sessionDir(id), m.st.turnsDir(id))
		if err != nil {
			return err
		}
		defer w.Close()
		t := time.NewTicker(livenessCheck)
		defer t.Stop()
		wake, tick = w.C(), t.C
	}
	n := max(opt.From, opt.Only, 1)
	var rd *TurnReader
	defer func() {
		if rd != nil {
			rd.Close()
		}
	}()
	for {
		s, err := m.st.load(id)
		if err != nil {
			return err
		}
		s = m.current(s)
		turns := s.Turns
		if s.Legacy {
			turns = legacyTurns(m.st.turnsDir(id))
		}
		for n <= len(turns) && (opt.Only == 0 || n == opt.Only) {
			t := turns[n-1]
			if rd == nil {
				ad, err := m.adapters.Lookup(s.Adapter)
				if err != nil {
					return err
				}
				rd = NewTurnReader(m.st.TurnPath(id, t.N), ad.NewParser(), 0)
				onTurn(t)
			}
			ended := t.EndedAt != nil || s.Legacy
			if err := rd.Read(ended, func(ev Event) { onEvent(t, ev) }); err != nil {
				return fmt.Errorf("follow %s: %w", ShortID(id), err)
			}
			if !ended {
				break
			}
			rd.Close()
			rd = nil
			n++
		}
		finished := s.Status.Finished() && s.Owner == nil
		if !opt.Live || finished && rd == nil || opt.Only != 0 && n > opt.Only {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-tick:
		}
	}
}
