package telemetry

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
)

// LandSpans are the spans of a landing of session s, under the session's
// span: "land", with its --verify command's "verify" under it. A landing
// that landed is read from the record (s.Workspace.Landed), the same live
// and rebuilt; one that did not (refused, its verify failed, nothing to
// land) goes from began to now, failed says why (nil: nothing to land),
// and verify is when its verify ran.
func LandSpans(s *record.Session, landed *record.Landing, began time.Time, verify *record.Interval, failed error) []Span {
	tr, _ := sessionTrace(s)
	land := Span{Trace: tr, Parent: SessionSpanID(s.ID), Name: "land", Start: began, End: time.Now().UTC(),
		Attrs: []attribute.KeyValue{attribute.String("zwarm.session.id", s.ID)}}
	switch {
	case landed != nil:
		land.Start, land.End, verify = landed.Started, landed.At, landed.Verify
		if land.Start.IsZero() {
			land.Start = landed.At
		}
		land.Attrs = append(land.Attrs, attribute.String("zwarm.landing.result", "landed"), attribute.String("zwarm.landing.into", landed.Into),
			attribute.String("zwarm.landing.commit", landed.Commit), attribute.String("zwarm.landing.strategy", string(landed.Strategy)))
	case failed != nil:
		land.Error = "refused"
		land.Attrs = append(land.Attrs, attribute.String("zwarm.landing.result", "refused"), attribute.String("zwarm.error", failed.Error()))
	default:
		land.Attrs = append(land.Attrs, attribute.String("zwarm.landing.result", "nothing to land"))
	}
	land.ID = SpanOf("land", s.ID, fmt.Sprint(land.Start.UnixNano()))
	out := []Span{land}
	if verify != nil {
		v := Span{Trace: tr, ID: SpanOf("verify", s.ID, fmt.Sprint(land.Start.UnixNano())), Parent: land.ID, Name: "verify",
			Start: verify.Start, End: verify.End, Attrs: []attribute.KeyValue{attribute.String("zwarm.session.id", s.ID)}}
		if landed == nil && failed != nil {
			v.Error = "failed"
		}
		out = append(out, v)
	}
	return out
}

// SendLanding sends the spans of a landing of s (LandSpans) with the
// telemetry in force in cfg, if it is on: the landing just ended, landed
// when failed is nil and the record has a landing from began on.
func SendLanding(cfg *config.Config, s *record.Session, began time.Time, verify *record.Interval, failed error) {
	var landed *record.Landing
	if w := s.Workspace; failed == nil && w != nil && w.Landed != nil && !w.Landed.At.Before(began) {
		landed = w.Landed
	}
	send(cfg, LandSpans(s, landed, began, verify, failed))
}

// AttachSpans are the spans a person worked in the agent's own CLI (zwarm
// attach), under the session's span: one "attach" each, ended ones only.
func AttachSpans(s *record.Session) []Span {
	tr, _ := sessionTrace(s)
	var out []Span
	for _, a := range s.Attaches {
		if a.End == nil {
			continue
		}
		sp := Span{Trace: tr, ID: SpanOf("attach", s.ID, fmt.Sprint(a.Start.UnixNano())), Parent: SessionSpanID(s.ID), Name: "attach",
			Start: a.Start, End: *a.End, Attrs: []attribute.KeyValue{attribute.String("zwarm.session.id", s.ID)}}
		if a.ExitCode != nil {
			sp.Attrs = append(sp.Attrs, attribute.Int("zwarm.exit_code", *a.ExitCode))
		}
		if a.Note != "" {
			sp.Attrs = append(sp.Attrs, attribute.String("zwarm.note", a.Note))
		}
		out = append(out, sp)
	}
	return out
}

// SendAttach sends the span of the attach of s that ended last.
func SendAttach(cfg *config.Config, s *record.Session) {
	if spans := AttachSpans(s); len(spans) > 0 {
		send(cfg, spans[len(spans)-1:])
	}
}

// On says telemetry is on in cfg: a caller that would read records only
// to send their spans asks first.
func On(cfg *config.Config) bool {
	_, url, err := cfg.Telemetry()
	return err == nil && url != ""
}

// send sends spans with the telemetry in force in cfg, if it is on, and
// waits at most FlushLimit for them to go.
func send(cfg *config.Config, spans []Span) {
	tr, err := Open(cfg, nil)
	if err != nil || tr == nil {
		return
	}
	tr.Emit(spans...)
	tr.Close()
}
