package sessions

import (
	"context"
	"log/slog"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/state"
)

// The supervisor lives in package sessions/supervisor, which imports this
// package, so these tests cannot import it; they reach it through these
// hooks, which supervise_link_test.go (package sessions_test, which may)
// sets before TestMain runs.
var (
	// SuperviseHook is supervisor.Supervise: `zwarm __supervise ID`.
	SuperviseHook func(ctx context.Context, st *state.Store, adapters agent.Adapters, id string) error
	// RunHook is supervisor.Run: a supervisor's work inside this process.
	RunHook func(ctx context.Context, st *state.Store, adapters agent.Adapters, id string, log *slog.Logger) error
)
