package watch

import (
	"context"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// Source is what the live readers (subscriptions, Follow, trajectories)
// read sessions through; the Manager is one.
type Source interface {
	// Store is the state dir's records.
	Store() *state.Store
	// Listings is its listing cache, which a subscription to every
	// session starts from.
	Listings() *listing.Cache
	// Judge makes, for a read of the records of ids, what brings each up
	// to date: a dead owner recorded, a running turn's progress folded in.
	Judge(ids []string) func(*record.Session) *record.Session
	// Get is one session, up to date.
	Get(ctx context.Context, idOrPrefix string) (*record.Session, error)
	// Adapters are the agents whose turn files it reads.
	Adapters() agent.Adapters
}
