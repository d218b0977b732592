package watch

import (
	"context"
	"os"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// SessionSpans rebuilds the spans of session s (a record just read) from
// what its supervisors kept: the record, each turn's file and the times of
// its items. They are the spans the supervisors sent, or would have with
// telemetry on; a turn still running is left out.
func SessionSpans(ctx context.Context, m Source, s *record.Session, content bool) ([]telemetry.Span, error) {
	files := m.Store().Files()
	var out []telemetry.Span
	entries, _ := m.Store().Inbox(s.ID)
	sentBy := telemetry.SentBy(entries)
	for i := range s.Turns {
		t := &s.Turns[i]
		if t.EndedAt == nil {
			continue
		}
		c := telemetry.Clock{Words: content}
		err := ReadTurn(ctx, m, s, t.N, func(ev record.Event) { c.Observe([]record.Event{ev}, time.Time{}) })
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		times := map[string]telemetry.ItemTime{}
		if f, err := os.Open(files.TurnTimes(s.ID, t.N)); err == nil {
			times = telemetry.ReadTimes(f)
			f.Close()
		}
		out = append(out, telemetry.TurnSpans(s, t, c.Items(), times, sentBy[t.InboxID], content)...)
	}
	out = append(out, telemetry.AttachSpans(s)...)
	if w := s.Workspace; w != nil && w.Landed != nil {
		out = append(out, telemetry.LandSpans(s, w.Landed, w.Landed.Started, nil, nil)...)
	}
	if end, ok := settledAt(files.SpanEnd(s.ID), s); ok {
		out = append(out, telemetry.SessionSpan(s, end, content))
	}
	return out, nil
}

// settledAt is when session s first settled, as its supervisor recorded
// it, or when its last turn ended; ok is false while it has not settled.
func settledAt(path string, s *record.Session) (time.Time, bool) {
	if b, err := os.ReadFile(path); err == nil {
		if t, err := time.Parse(time.RFC3339Nano, string(b)); err == nil {
			return t, true
		}
	}
	if !s.Settled() {
		return time.Time{}, false
	}
	if s.EndedAt != nil {
		return *s.EndedAt, true
	}
	if n := len(s.Turns); n > 0 && s.Turns[n-1].EndedAt != nil {
		return *s.Turns[n-1].EndedAt, true
	}
	return s.CreatedAt, true
}
