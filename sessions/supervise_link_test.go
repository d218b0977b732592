package sessions_test

import (
	"context"
	"log/slog"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/supervisor"
)

func init() {
	sessions.SuperviseHook = func(ctx context.Context, st *state.Store, adapters agent.Adapters, id string) error {
		return supervisor.Supervise(ctx, supervisor.Options{Store: st, Adapters: adapters}, id)
	}
	sessions.RunHook = func(ctx context.Context, st *state.Store, adapters agent.Adapters, id string, log *slog.Logger) error {
		return supervisor.Run(ctx, supervisor.Options{Store: st, Adapters: adapters}, id, log)
	}
}
