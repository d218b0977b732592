package sessions

import (
	"context"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/telemetry"
	"github.com/zwarm/zwarm/sessions/watch"
)

// SessionSpans rebuilds the spans of session s from its records
// (watch.SessionSpans): those its supervisors sent with telemetry on.
func (m *Manager) SessionSpans(ctx context.Context, s *record.Session, content bool) ([]telemetry.Span, error) {
	return watch.SessionSpans(ctx, m, s, content)
}
