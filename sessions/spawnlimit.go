package sessions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// spawnLockFile, in the state dir, is held by a spawn with a limit while it
// counts the running sessions of its source and records the new one:
// otherwise two spawns (two tool calls at once, or two processes sharing
// the state dir) could each count one free place and both take it.
const spawnLockFile = "spawn.lock"

// LimitError refuses a spawn that would run more sessions of one source at
// once than its limit allows. Nothing was recorded or started.
type LimitError struct {
	Source         record.Source
	Running, Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%d sessions of %s are already running and the limit is %d", e.Running, e.Source, e.Limit)
}

// createWithin records s, unless limit (above zero) sessions of its source
// are already unsettled: the count and the record are one step, under the
// state dir's spawn lock. The new record is pending from the moment it
// exists, so the next spawn to take the lock counts it.
func (m *Manager) createWithin(ctx context.Context, s *record.Session, limit int) error {
	if limit <= 0 {
		return m.st.Create(s)
	}
	if err := m.st.EnsureWritable(); err != nil {
		return err
	}
	l, err := state.LockFileCtx(ctx, m.st.Dir(), filepath.Join(m.st.Dir(), spawnLockFile))
	if err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	defer l.Unlock()
	list, err := m.List(ctx, listing.Options{Active: true})
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
		return fmt.Errorf("count the running sessions: %w", err)
	}
	n := 0
	for _, x := range list {
		if x.Source == s.Source {
			n++
		}
	}
	if n >= limit {
		return &LimitError{Source: s.Source, Running: n, Limit: limit}
	}
	return m.st.Create(s)
}
