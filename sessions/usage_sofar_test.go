package sessions_test

import (
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// Usage reported call by call counts in the turn's usage and cost as it
// goes, so a cost limit sees it; the turn's own report replaces it, and a
// turn stopped before its report keeps it.
func TestUsageSoFarCountsUntilTheTurnsOwnReport(t *testing.T) {
	prices := record.Prices{"m": {Input: 1, Output: 10}}
	s := &record.Session{Model: "m", MaxCostUSD: 0.5, Turns: []record.Turn{{N: 1}}}
	call := func(in, out int64) record.Event {
		return record.Event{Type: record.EventUsage, Usage: &record.Usage{InputTokens: in, OutputTokens: out}}
	}
	s.Fold(call(200_000, 1_000))
	s.Fold(call(300_000, 9_000))
	s.Refresh(prices)
	if s.Usage.InputTokens != 500_000 || s.Usage.OutputTokens != 10_000 || s.CostUSD == nil || *s.CostUSD != 0.6 {
		t.Fatalf("so far: usage %+v, cost %v", s.Usage, s.CostUSD)
	}
	if why := state.OverCostLimit(s); why != "over its cost limit of $0.50: $0.60 spent" {
		t.Fatalf("limit: %q", why)
	}
	final := 0.42
	s.Fold(record.Event{Type: record.EventTurnCompleted, Usage: &record.Usage{InputTokens: 400_000, OutputTokens: 2_000}, CostUSD: &final})
	s.Refresh(prices)
	if tr := s.Turns[0]; tr.UsageSoFar != nil || s.Usage.InputTokens != 400_000 || *s.CostUSD != 0.42 {
		t.Fatalf("after the report: turn %+v, usage %+v, cost %v", tr, s.Usage, *s.CostUSD)
	}
	// A later turn stopped before its report keeps what its calls used.
	s.Turns = append(s.Turns, record.Turn{N: 2})
	s.Fold(call(10_000, 0))
	s.Refresh(prices)
	if s.Usage.InputTokens != 410_000 || *s.CostUSD != 0.43 {
		t.Fatalf("a turn cut short: usage %+v, cost %v", s.Usage, *s.CostUSD)
	}
}

// A person's attached span in a thread the agent counts whole (codex)
// takes its share of the running total: the next turn is charged only
// its own calls, and the session counts the span once.
func TestAnAttachedSpanIsChargedItsOwnShare(t *testing.T) {
	at := func(m int) *time.Time { v := time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC); return &v }
	t1 := record.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
	s := &record.Session{Model: "m", Turns: []record.Turn{{N: 1, Usage: t1, ThreadUsage: &t1, EndedAt: at(1)}},
		Attaches: []record.AttachSpan{{Start: *at(2), End: at(3)}}}
	sessions.RecordAttachUsage(s, record.Usage{InputTokens: 300, OutputTokens: 30}, true)
	if u := s.Attaches[0].Usage; u == nil || u.InputTokens != 200 || u.OutputTokens != 20 {
		t.Fatalf("the span's usage: %+v", u)
	}
	s.Turns = append(s.Turns, record.Turn{N: 2, StartedAt: *at(4)})
	s.Fold(record.Event{Type: record.EventTurnCompleted, Cumulative: true, Usage: &record.Usage{InputTokens: 400, OutputTokens: 40}})
	s.Refresh(record.Prices{"m": {Input: 1, Output: 1}})
	if got := s.Turns[1].Usage; got.InputTokens != 100 || got.OutputTokens != 10 {
		t.Fatalf("turn 2 was charged %+v; want its own call, 100 in and 10 out", got)
	}
	if s.Usage.InputTokens != 400 || s.Usage.OutputTokens != 40 {
		t.Fatalf("the session counts %+v; want the thread's 400 in and 40 out, each once", s.Usage)
	}
}
