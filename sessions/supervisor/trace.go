package supervisor

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// traceTurns keeps the times of the items of the turns an agent process
// served (always: a trace rebuilt later needs them) and, with telemetry
// on, sends their spans; when the session has settled for the first time,
// its own span too. s is the record after the last of them.
func (sv *supervisor) traceTurns(s *record.Session, clocks map[int]*telemetry.Clock, from, to int) {
	if s == nil {
		return
	}
	files := sv.st.Files()
	var sentBy map[string]string
	if sv.tracer != nil {
		entries, _ := sv.st.Inbox(sv.id)
		sentBy = telemetry.SentBy(entries)
	}
	for n := from; n <= to && n <= len(s.Turns); n++ {
		c := clocks[n]
		if c == nil {
			c = &telemetry.Clock{}
		}
		ts := c.Times()
		if len(ts) > 0 {
			sv.keepTimes(files, n, ts)
		}
		if sv.tracer == nil {
			continue
		}
		times := make(map[string]telemetry.ItemTime, len(ts))
		for _, t := range ts {
			times[t.Item] = t
		}
		t := &s.Turns[n-1]
		sv.tracer.Emit(telemetry.TurnSpans(s, t, c.Items(), times, sentBy[t.InboxID], sv.tracer.Content())...)
	}
	if s.Settled() {
		if end, first := sv.firstSettled(files, s); first && sv.tracer != nil {
			sv.tracer.Emit(telemetry.SessionSpan(s, end, sv.tracer.Content()))
		}
	}
}

// keepTimes writes turn n's item times beside its turn file.
func (sv *supervisor) keepTimes(files store.Layout, n int, times []telemetry.ItemTime) {
	var b bytes.Buffer
	telemetry.WriteTimes(&b, times)
	if err := os.WriteFile(files.TurnTimes(sv.id, n), b.Bytes(), 0o600); err != nil {
		sv.log.Warn("cannot keep the times of the turn's items; a rebuilt trace has the turn's own", "turn", n, "err", err)
	}
}

// firstSettled records when the session first settled (its span's end),
// once: first says this call recorded it.
func (sv *supervisor) firstSettled(files store.Layout, s *record.Session) (end time.Time, first bool) {
	end = time.Now().UTC()
	if s.EndedAt != nil {
		end = *s.EndedAt
	}
	f, err := os.OpenFile(files.SpanEnd(sv.id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return end, false
	}
	if err != nil {
		sv.log.Warn("cannot record when the session settled", "err", err)
		return end, true
	}
	defer f.Close()
	f.WriteString(end.Format(time.RFC3339Nano))
	return end, true
}
