package sessions

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
)

// Get returns the current state of one session, by id or unique prefix.
func (m *Manager) Get(ctx context.Context, idOrPrefix string) (*record.Session, error) {
	id, err := listing.Resolve(m.st, idOrPrefix)
	if err != nil {
		return nil, err
	}
	s, err := m.st.Load(id)
	if err != nil {
		return nil, err
	}
	return m.current(s, nil), nil
}

// List returns every session that matches, newest first: settled ones as
// a summary, the record without its turns (Get has them); unsettled ones
// whole. Settled sessions cost a stat of their meta.json when the listing
// cache (sessions/listing) has them and they are listed (a listing with a
// limit reads the cache only as far as it shows), one read
// otherwise; unsettled ones also parse what their agent wrote since the
// supervisor last recorded progress, and nothing more. Records that cannot
// be read are reported in a *ListError beside the sessions that could.
func (m *Manager) List(ctx context.Context, opt listing.Options) ([]*record.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.cache.List(opt)
}

// readCtx carries what one read of many sessions shares: the price table
// is loaded once, not once per running session.
type readCtx struct {
	m      *Manager
	prices record.Prices
	// ids are the sessions this read looks at, when known: the first
	// one under another runner has the jobs of all of them asked about
	// together, one call to each engine rather than one a session.
	ids        []string
	prefetched bool
}

// prefetchJobs asks, once, about the jobs of every session the read will
// look at, before the first of them is judged.
func (rc *readCtx) prefetchJobs(ctx context.Context) {
	if rc.prefetched || len(rc.ids) == 0 {
		return
	}
	rc.prefetched = true
	var list []*record.Session
	for _, id := range rc.ids {
		if s, err := rc.m.st.Load(id); err == nil && state.Remote(s) && !s.Settled() {
			list = append(list, s)
		}
	}
	rc.m.prefetchJobs(ctx, list)
}

func (rc *readCtx) priceTable() record.Prices {
	if rc.prices == nil {
		rc.prices = record.DefaultPrices()
		if cfg, err := rc.m.Config(); err == nil {
			rc.prices = cfg.PriceTable()
		}
	}
	return rc.prices
}

// current brings a loaded record up to date: a dead owner is detected and
// recorded, and a running turn's unrecorded progress is folded in.
func (m *Manager) current(s *record.Session, rc *readCtx) *record.Session {
	if rc == nil {
		rc = &readCtx{m: m}
	}
	if s.Legacy {
		return state.LegacyCurrent(s, rc.priceTable())
	}
	if s.Settled() {
		return s
	}
	if state.Remote(s) {
		rc.prefetchJobs(context.Background())
	}
	if alive, known := m.ownerAlive(context.Background(), s); !alive && known {
		return m.ownerDied(s)
	}
	if state.Remote(s) && s.Status() != record.StatusAttached {
		s.RunnerState, s.JobQueued = m.runnerState(context.Background(), s)
	}
	t := s.Current()
	if t == nil || t.EndedAt != nil {
		return s
	}
	ad, err := m.adapters.Lookup(s.Adapter)
	if err != nil {
		return s
	}
	rd := watch.NewTurnReader(m.st.TurnPath(s.ID, t.N), ad.NewParser(), t.Offset)
	defer rd.Close()
	rd.Read(false, s.Fold)
	t.Offset = rd.Offset()
	s.Refresh(rc.priceTable())
	return s
}

// ownerDied records, under the lock, that the process responsible for a
// session is gone without having recorded the outcome, and stops what is
// left of the session. The status becomes failed with an error that says
// so: never "running" forever, never a guess.
func (m *Manager) ownerDied(seen *record.Session) *record.Session {
	s, _, err := m.st.TryRecord(seen.ID, func(tx *state.Tx) error {
		s := tx.Session()
		if s.Settled() {
			return nil // someone else settled it meanwhile
		}
		if alive, known := m.ownerAlive(context.Background(), s); alive || !known {
			return nil
		}
		return m.abandonLocked(tx)
	})
	if err != nil || s == nil {
		// A read-only state dir, or someone holds the lock (a reader never
		// waits for it; the next look records it): report the truth
		// without recording it.
		c := seen.Clone()
		state.OwnerGoneUnrecorded(c, attacherDiedNote(c.Owner), time.Now().UTC())
		return c
	}
	return s
}

// abandonLocked settles a session whose owner died, after stopping every
// process left of it. Callers hold the lock.
func (m *Manager) abandonLocked(tx *state.Tx) error {
	s := tx.Session()
	if s.Status() == record.StatusAttached {
		return m.attacherGone(tx)
	}
	if state.RunnerJudges(s) && s.Job.ID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return m.abandonRemote(ctx, tx)
	}
	what, pid := "the supervisor", 0
	if s.Owner != nil {
		pid = s.Owner.PID
		if s.Owner.Role == record.RoleSpawn {
			what = "the spawning command"
		}
	}
	msg := fmt.Sprintf("%s (pid %d) died without recording the outcome", what, pid)
	if t := s.Current(); t != nil && t.EndedAt == nil {
		msg = fmt.Sprintf("%s of turn %d; the agent's exit code is unknown", msg, t.N)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := m.containment(s.ID)
	// populated sees a process the listing missed while it moved between
	// cgroups of the session.
	if left := c.Procs(); len(left) > 0 || proc.Populated(c.Cgroup) {
		pids := make([]string, len(left))
		for i, p := range left {
			pids[i] = strconv.Itoa(p.PID)
		}
		if err := c.Sweep(ctx); err != nil {
			msg += fmt.Sprintf("; its processes %s could not be stopped: %v", strings.Join(pids, " "), err)
		} else {
			msg += fmt.Sprintf("; zwarm stopped what it left running (pid %s)", strings.Join(pids, " "))
		}
	}
	if err := proc.RemoveCgroup(c.Cgroup); err == nil {
		m.st.ForgetCgroup(s.ID)
	}
	if err := tx.Abandon(msg, m.st.DiedAt(s, time.Now().UTC())); err != nil {
		return err
	}
	return m.st.DropQueued(s, "the supervisor died before it was delivered")
}

// Count is how many sessions the state dir holds, those whose records
// cannot be read included: the listing cache's count while the sessions
// dir is as the cache saw it, else a listing's.
func (m *Manager) Count(ctx context.Context) (int, error) {
	if n, ok := m.cache.CachedCount(); ok {
		return n, nil
	}
	list, err := m.List(ctx, listing.Options{})
	var le *listing.Error
	if errors.As(err, &le) {
		return len(list) + len(le.Records), nil
	}
	return len(list), err
}

// Judge is how a listing brings the records it reads up to date: one
// read context for the ids it reads, so their runners' jobs are asked
// about together.
func (m *Manager) Judge(ids []string) func(*record.Session) *record.Session {
	rc := &readCtx{m: m, ids: ids}
	return func(s *record.Session) *record.Session { return m.current(s, rc) }
}
