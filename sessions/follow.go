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
// as the agent writes them. Live, it wakes on file events (appends reach
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
	tr := m.NewTrajectory(id, TrajectoryOptions{From: opt.From, Only: opt.Only})
	defer tr.Close()
	for {
		s, batches, err := tr.Read(ctx)
		if err != nil {
			return fmt.Errorf("follow %s: %w", ShortID(id), err)
		}
		for _, b := range batches {
			if b.First {
				onTurn(b.Turn)
			}
			for _, ev := range b.Events {
				onEvent(b.Turn, ev)
			}
		}
		// A finished session's turns have all been read to their end.
		if !opt.Live || s.Status.Finished() && s.Owner == nil || opt.Only != 0 && opt.Only <= len(s.Turns) && s.Turns[opt.Only-1].EndedAt != nil {
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
