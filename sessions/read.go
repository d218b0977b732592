package sessions

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Get returns the current state of one session, by id or unique prefix.
func (m *Manager) Get(ctx context.Context, idOrPrefix string) (*Session, error) {
	id, err := m.st.resolve(idOrPrefix)
	if err != nil {
		return nil, err
	}
	s, err := m.st.load(id)
	if err != nil {
		return nil, err
	}
	return m.current(s), nil
}

// Resolve turns an id prefix into a full id.
func (m *Manager) Resolve(idOrPrefix string) (string, error) { return m.st.resolve(idOrPrefix) }

// ListOptions filters a listing.
type ListOptions struct {
	Status Status // "" for all
}

// List returns every session, newest first. Finished sessions cost one read
// of meta.json each; running ones also parse what their agent wrote since
// the supervisor last recorded progress, and nothing more.
func (m *Manager) List(ctx context.Context, opt ListOptions) ([]*Session, error) {
	ids, err := m.st.ids()
	if err != nil {
		return nil, err
	}
	out := make([]*Session, 0, len(ids))
	prices := &priceTable{m: m}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, err := m.st.load(id)
		if err != nil {
			// A session being removed, or a half-created one from a crashed
			// spawn: it has no record to show.
			continue
		}
		s = m.currentWith(s, prices)
		if opt.Status != "" && s.Status != opt.Status {
			continue
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// current brings a loaded record up to date: a dead owner is detected and
// recorded, and a running turn's unrecorded progress is folded in.
func (m *Manager) current(s *Session) *Session { return m.currentWith(s, nil) }

// priceTable loads the configured prices once per caller: a listing with
// many running sessions reads config.toml once, not once per session.
type priceTable struct {
	m      *Manager
	prices Prices
}

func (p *priceTable) get() Prices {
	if p.prices == nil {
		p.prices = DefaultPrices()
		if cfg, err := LoadConfig(p.m.st.Dir()); err == nil {
			p.prices = cfg.PriceTable()
		}
	}
	return p.prices
}

func (m *Manager) currentWith(s *Session, pt *priceTable) *Session {
	if s.Legacy || (s.Status.Finished() && s.Owner == nil) {
		return s
	}
	if !s.Owner.Alive() {
		return m.ownerDied(s)
	}
	t := s.current()
	if t == nil || t.EndedAt != nil {
		return s
	}
	ad, err := m.adapters.Lookup(s.Adapter)
	if err != nil {
		return s
	}
	rd := NewTurnReader(m.st.TurnPath(s.ID, t.N), ad.NewParser(), t.Offset)
	defer rd.Close()
	rd.Read(false, s.fold)
	t.Offset = rd.Offset()
	if pt == nil {
		pt = &priceTable{m: m}
	}
	s.refresh(pt.get())
	return s
}

// ownerDied records, under the lock, that the process responsible for a
// session is gone without having recorded the outcome. The status becomes
// failed with an error that says so: never "running" forever, never a guess.
func (m *Manager) ownerDied(seen *Session) *Session {
	s, err := m.st.update(seen.ID, func(s *Session) error {
		if s.Status.Finished() && s.Owner == nil || s.Owner.Alive() {
			return nil // someone else settled it meanwhile
		}
		now := time.Now().UTC()
		what := "the supervisor"
		if s.Owner != nil && s.Owner.Role == roleSpawn {
			what = "the spawning command"
		}
		pid := 0
		if s.Owner != nil {
			pid = s.Owner.PID
		}
		msg := fmt.Sprintf("%s (pid %d) died without recording the outcome", what, pid)
		if t := s.current(); t != nil && t.EndedAt == nil {
			msg = fmt.Sprintf("%s of turn %d; the agent's exit code is unknown", msg, t.N)
			t.Status, t.EndedAt, t.Error = StatusFailed, &now, msg
		}
		if s.Agent.Alive() {
			msg += fmt.Sprintf("; agent pid %d is still running unsupervised: zwarm kill %s stops it", s.Agent.PID, ShortID(s.ID))
		}
		s.Status, s.Error, s.Owner, s.EndedAt = StatusFailed, msg, nil, &now
		return m.st.dropQueued(s, "the supervisor died before it was delivered")
	})
	if err != nil {
		// A read-only state dir: report the truth without recording it.
		c := seen.Clone()
		c.Status, c.Error = StatusFailed, "its supervisor is gone without recording the outcome"
		return c
	}
	return s
}

// Inbox lists a session's follow-ups and what became of each.
func (m *Manager) Inbox(id string) ([]InboxEntry, error) { return m.st.inbox(id) }
