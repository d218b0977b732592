package sessions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// QueueResult is what a merge queue (LandAll) did.
type QueueResult struct {
	// Landed are the sessions landed, in order (with DryRun, those that
	// would be; Nothing with a change: the branch had it whole already).
	Landed []*LandResult
	// Skipped are settled sessions with changes the queue does not take:
	// they failed or were killed (land them by id).
	Skipped []*record.Session
	// Failed is the session the queue stopped at, Err why; Left are the
	// ones after it, not tried.
	Failed *record.Session
	Err    error
	Left   []*record.Session
}

// LandAll is a merge queue: it lands every completed, settled session of
// the repository opt.Dir is in whose change is not landed yet, oldest
// first, one by one, each built on the branch as the one before left it
// and (with opt.Verify) verified on exactly that, and stops at the first
// that fails to land. Sessions that failed or were killed are skipped: a
// queue does not land work its worker did not finish.
func (m *Manager) LandAll(ctx context.Context, opt LandOptions) (*QueueResult, error) {
	if err := m.trusted(); err != nil { // it runs git, with the settings
		return nil, err
	}
	dir := opt.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	repo, err := workspace.Find(ctx, dir)
	if errors.Is(err, workspace.ErrNotRepo) {
		return nil, config.Invalidf("%s is not in a git repository: land --all lands the sessions of the repository it runs in", dir)
	}
	if err != nil {
		return nil, err
	}
	unlock, err := m.st.LandLock(store.WithLockPolicy(ctx, store.LockPolicy{Notify: m.lockWaiting}))
	if err != nil {
		return nil, err
	}
	defer unlock()
	all, err := m.List(ctx, listing.Options{})
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
		return nil, err
	}
	q := &QueueResult{}
	var todo []*record.Session
	for _, s := range all {
		ws := s.Workspace
		// Changes unknown (the turn's commit did not finish: a timeout,
		// say) is not no change: land looks, as land ID does.
		if s.Legacy || ws == nil || ws.GitDir != repo.CommonDir || !s.Settled() || ws.LandedNow() ||
			ws.Preparing() || ws.State == record.WorkspaceFailed || (ws.Changes != nil && ws.Changes.Empty()) {
			continue
		}
		if s.Status() != record.StatusCompleted {
			q.Skipped = append(q.Skipped, s)
			continue
		}
		todo = append(todo, s)
	}
	slices.SortStableFunc(todo, func(a, b *record.Session) int { return cmp.Compare(a.CreatedAt.UnixNano(), b.CreatedAt.UnixNano()) })
	for i, s := range todo {
		if err := ctx.Err(); err != nil {
			q.Failed, q.Err, q.Left = s, err, todo[i+1:]
			return q, fmt.Errorf("land --all: %w", err)
		}
		res, err := m.land(ctx, s.ID, opt)
		if err != nil {
			q.Failed, q.Err, q.Left = s, err, todo[i+1:]
			return q, err
		}
		// One the branch has whole already is recorded landed: told so.
		if !res.Already && !(res.Nothing && res.Stat.Empty()) {
			q.Landed = append(q.Landed, res)
		}
		if opt.DryRun && len(todo) > 1 {
			// A dry run lands nothing, so the next one would be checked
			// against a branch without this one: say so rather than guess.
			q.Left = todo[i+1:]
			return q, nil
		}
	}
	return q, nil
}
