package tools

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// Sessions is what the worker tools need of the session core.
// *sessions.Manager implements it.
type Sessions interface {
	Spawn(ctx context.Context, req sessions.SpawnRequest) (*record.Session, error)
	Inject(ctx context.Context, idOrPrefix, text string) (*sessions.InjectResult, error)
	// Interrupt is Inject that first stops the running turn.
	Interrupt(ctx context.Context, idOrPrefix, text string) (*sessions.InjectResult, error)
	// KillReport stops a worker and says which queued follow-ups it dropped.
	KillReport(ctx context.Context, idOrPrefix, reason string) (*sessions.Killed, error)
	Remove(ctx context.Context, idOrPrefix string, force bool) (string, error)
	Get(ctx context.Context, idOrPrefix string) (*record.Session, error)
	List(ctx context.Context, opt listing.Options) ([]*record.Session, error)
	Subscribe(ctx context.Context, opt watch.SubscribeOptions) (*watch.Subscription, error)
	Transcript(ctx context.Context, idOrPrefix string) (*record.Session, []watch.TurnLog, error)
	Config() (*config.Config, error)
	// Diff, Land and Update are a worker's git worktree: what it changed,
	// bringing that into the run's checkout, and merging the checkout's
	// branch into the worker's when the two conflict.
	Diff(ctx context.Context, idOrPrefix string, out io.Writer, req sessions.DiffRequest) (*record.Session, error)
	Land(ctx context.Context, idOrPrefix string, opt sessions.LandOptions) (*sessions.LandResult, error)
	Update(ctx context.Context, idOrPrefix, from string) (*sessions.UpdateResult, error)
}

var _ Sessions = (*sessions.Manager)(nil)

// Seen remembers which finished turns of each worker the model has been
// shown (by wait, check_session, peek_session or get_trajectory): a worker
// that finished since is news, flagged by list_sessions. It is safe for
// concurrent use.
type Seen struct {
	mu    sync.Mutex
	ended map[string]time.Time // the EndedAt the model was shown
}

// NewSeen starts from a snapshot (nil for none).
func NewSeen(snapshot map[string]time.Time) *Seen {
	s := &Seen{ended: map[string]time.Time{}}
	for k, v := range snapshot {
		s.ended[k] = v
	}
	return s
}

// Mark records that the model has been shown s as it is.
func (sn *Seen) Mark(s *record.Session) {
	if s == nil || !s.Settled() || s.EndedAt == nil {
		return
	}
	sn.mu.Lock()
	sn.ended[s.ID] = *s.EndedAt
	sn.mu.Unlock()
}

// Unread reports whether s finished and the model has not seen it since.
func (sn *Seen) Unread(s *record.Session) bool {
	if !s.Settled() || s.EndedAt == nil {
		return false
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	at, ok := sn.ended[s.ID]
	return !ok || at.Before(*s.EndedAt)
}

// Snapshot returns what has been seen, for saving.
func (sn *Seen) Snapshot() map[string]time.Time {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	out := make(map[string]time.Time, len(sn.ended))
	for k, v := range sn.ended {
		out[k] = v
	}
	return out
}
