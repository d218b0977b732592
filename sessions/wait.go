package sessions

import (
	"context"
	"fmt"
	"time"
)

// livenessCheck is how often waits re-check owners that might have died
// without a file event (a supervisor killed with SIGKILL writes nothing).
const livenessCheck = time.Second

// Wait blocks until the sessions have finished (with any, until the first
// of them has) and returns their final records. It is driven by file events
// on the session directories.
func (m *Manager) Wait(ctx context.Context, ids []string, any bool) ([]*Session, error) {
	full := make([]string, len(ids))
	for i, p := range ids {
		id, err := m.st.resolve(p)
		if err != nil {
			return nil, err
		}
		full[i] = id
	}
	dirs := make([]string, len(full))
	for i, id := range full {
		dirs[i] = m.st.sessionDir(id)
	}
	w, err := watchDirs(dirs...)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	tick := time.NewTicker(livenessCheck)
	defer tick.Stop()
	for {
		out := make([]*Session, 0, len(full))
		done := 0
		for _, id := range full {
			s, err := m.st.load(id)
			if err != nil {
				return nil, err
			}
			s = m.current(s)
			if s.Status.Finished() && s.Owner == nil {
				done++
			}
			out = append(out, s)
		}
		if done == len(full) || any && done > 0 {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("wait: %w", ctx.Err())
		case <-w.C():
		case <-tick.C:
		}
	}
}

// waitUntil re-evaluates cond on every change of the session until it holds.
func (m *Manager) waitUntil(ctx context.Context, id string, cond func(*Session) (bool, error)) (*Session, error) {
	w, err := watchDirs(m.st.sessionDir(id), m.st.inboxDir(id))
	if err != nil {
		return nil, err
	}
	defer w.Close()
	tick := time.NewTicker(livenessCheck)
	defer tick.Stop()
	for {
		s, err := m.st.load(id)
		if err != nil {
			return nil, err
		}
		s = m.current(s)
		ok, err := cond(s)
		if err != nil || ok {
			return s, err
		}
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("wait: %w", ctx.Err())
		case <-w.C():
		case <-tick.C:
		}
	}
}
