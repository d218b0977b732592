package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"go.opentelemetry.io/otel/trace"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/telemetry"
	"github.com/zwarm/zwarm/sessions/watch"
)

// TraceSource is what a trace is rebuilt from besides the runs' own
// records: the sessions (*sessions.Manager).
type TraceSource interface {
	watch.Source
	Get(ctx context.Context, idOrPrefix string) (*record.Session, error)
}

// RebuildTrace returns the spans of the run, or else the session, that
// idOrPrefix names, rebuilt from their records: the run's events, and each
// of its workers' turns; they are the spans sent live with telemetry on.
func RebuildTrace(ctx context.Context, src TraceSource, stateDir, idOrPrefix string, content bool) (trace.TraceID, []telemetry.Span, error) {
	rec, err := runs.LoadRecord(stateDir, idOrPrefix)
	if err != nil {
		s, serr := src.Get(ctx, idOrPrefix)
		if serr != nil {
			// Said once: the session's error says what is wrong with the id
			// (not one, ambiguous, or no such), and that zwarm runs lists runs.
			return trace.TraceID{}, nil, fmt.Errorf("%w; nor is it a run's (zwarm runs lists them)", serr)
		}
		spans, err := watch.SessionSpans(ctx, src, s, content)
		return telemetry.SessionTrace(s), spans, err
	}
	events, err := runs.ReadEvents(stateDir, rec.ID)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return trace.TraceID{}, nil, err
	}
	var spans []telemetry.Span
	b := runs.Spans{Emit: func(s ...telemetry.Span) { spans = append(spans, s...) }, Content: content}
	for _, ev := range events {
		b.Add(ev)
	}
	if rec.Status == runs.StatusInterrupted {
		b.Interrupted() // its process died (runs.Record.Current)
	}
	for _, id := range rec.Workers {
		s, err := src.Get(ctx, id)
		if err != nil {
			continue // removed since (zwarm rm): its spans are gone with it
		}
		more, err := watch.SessionSpans(ctx, src, s, content)
		if err != nil {
			return trace.TraceID{}, nil, err
		}
		spans = append(spans, more...)
	}
	return runs.TraceOf(rec.ID), spans, nil
}
