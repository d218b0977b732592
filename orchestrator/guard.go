package orchestrator

import (
	"context"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/watchers"
)

// Verdict is one watcher's answer.
type Verdict struct {
	Watcher string
	Action  runs.Action
	Message string
}

// Guard is asked before every model call. The most severe verdict wins
// (abort, then pause); every nudge is added; each verdict other than
// continue is written to events.jsonl. Check must not block for long: the
// run waits for it.
type Guard interface {
	Check(ctx context.Context, v *watchers.RunView) []Verdict
}

// NoGuard lets every step run.
type NoGuard struct{}

// Check implements Guard.
func (NoGuard) Check(context.Context, *watchers.RunView) []Verdict { return nil }
