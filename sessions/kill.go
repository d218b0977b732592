package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNotRunning is returned (wrapped) by Kill for a finished session.
var ErrNotRunning = errors.New("session is not running")

// ErrRunning is returned (wrapped) by Remove for a session that still runs.
var ErrRunning = errors.New("session is running")

// Kill stops a session: its supervisor gives the agent SIGTERM, the grace
// period and SIGKILL, then kills every remaining process of the session. If
// the supervisor is gone, Kill does that itself. When Kill returns without
// error, no process started for the session is alive.
func (m *Manager) Kill(ctx context.Context, idOrPrefix string) (*Session, error) {
	id, err := m.st.resolve(idOrPrefix)
	if err != nil {
		return nil, err
	}
	s, err := m.st.load(id)
	if err != nil {
		return nil, err
	}
	if s.Legacy {
		return nil, fmt.Errorf("kill %s: written by the Python zwarm, which this zwarm does not supervise", ShortID(id))
	}
	cfg, _ := LoadConfig(m.st.Dir())
	grace := cfg.Grace()

	// A spawn or inject that is handing the session to its supervisor owns
	// it for a few milliseconds; wait for the handover instead of
	// signalling the user's own command.
	for i := 0; i < 200 && s.Owner.Alive() && s.Owner.Role == roleSpawn; i++ {
		time.Sleep(10 * time.Millisecond)
		if s, err = m.st.load(id); err != nil {
			return nil, err
		}
	}
	owner := s.Owner
	switch {
	case owner.Alive() && owner.Role == roleSupervisor:
		if err := owner.signal(unix.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return nil, fmt.Errorf("kill %s: signal supervisor: %w", ShortID(id), err)
		}
		wctx, cancel := context.WithTimeout(ctx, grace+10*time.Second)
		err := owner.waitGone(wctx)
		cancel()
		if err != nil {
			// The supervisor did not finish in time: take over.
			owner.signal(unix.SIGKILL)
			owner.waitGone(ctx)
		}
	case !s.Status.Finished() || owner != nil:
		// No live supervisor: nothing will record the kill but us.
	default:
		if len(sessionProcs(id, 0)) == 0 {
			return s, fmt.Errorf("kill %s: %w (it is %s)", ShortID(id), ErrNotRunning, s.Status)
		}
	}
	if s.Agent.Alive() {
		unix.Kill(-s.Agent.PID, unix.SIGKILL)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sweep(sctx, id, 0); err != nil {
		return nil, fmt.Errorf("kill %s: %w", ShortID(id), err)
	}
	return m.st.update(id, func(s *Session) error {
		if s.Status.Finished() && s.Owner == nil {
			return nil // the supervisor recorded it
		}
		now := time.Now().UTC()
		if t := s.current(); t != nil && t.EndedAt == nil {
			t.Status, t.EndedAt, t.Error = StatusKilled, &now, "killed by zwarm kill (the supervisor was gone)"
		}
		s.Status, s.Owner, s.Agent, s.EndedAt = StatusKilled, nil, nil, &now
		s.Error = "killed by zwarm kill (the supervisor was gone)"
		return m.st.dropQueued(s, "the session was killed before it was delivered")
	})
}

// Remove deletes a finished session and everything it recorded. A running
// session is refused unless force is set, which kills it first.
func (m *Manager) Remove(ctx context.Context, idOrPrefix string, force bool) (string, error) {
	id, err := m.st.resolve(idOrPrefix)
	if err != nil {
		return "", err
	}
	s, err := m.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if s.Legacy {
		return "", fmt.Errorf("rm %s: written by the Python zwarm; this zwarm only reads it (delete %s by hand)", ShortID(id), m.st.sessionDir(id))
	}
	if !s.Status.Finished() || s.Owner != nil {
		if !force {
			return "", fmt.Errorf("rm %s: %w (%s); kill it first or pass --force", ShortID(id), ErrRunning, s.Status)
		}
		if _, err := m.Kill(ctx, id); err != nil && !errors.Is(err, ErrNotRunning) {
			return "", err
		}
	}
	return id, m.st.remove(id)
}

// Clean removes finished sessions that ended before the cutoff.
func (m *Manager) Clean(ctx context.Context, olderThan time.Duration) ([]string, error) {
	all, err := m.List(ctx, ListOptions{})
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-olderThan)
	var removed []string
	for _, s := range all {
		if s.Legacy || !s.Status.Finished() || s.Owner != nil {
			continue
		}
		end := s.UpdatedAt
		if s.EndedAt != nil {
			end = *s.EndedAt
		}
		if end.After(cutoff) {
			continue
		}
		if err := m.st.remove(s.ID); err != nil {
			return removed, err
		}
		removed = append(removed, s.ID)
	}
	return removed, nil
}
