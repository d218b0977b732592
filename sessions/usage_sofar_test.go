package sessions

import "testing"

// Usage reported call by call counts in the turn's usage and cost as it
// goes, so a cost limit sees it; the turn's own report replaces it, and a
// turn stopped before its report keeps it.
func TestUsageSoFarCountsUntilTheTurnsOwnReport(t *testing.T) {
	prices := Prices{"m": {Input: 1, Output: 10}}
	s := &Session{Model: "m", MaxCostUSD: 0.5, Turns: []Turn{{N: 1}}}
	call := func(in, out int64) Event {
		return Event{Type: EventUsage, Usage: &Usage{InputTokens: in, OutputTokens: out}}
	}
	s.fold(call(200_000, 1_000))
	s.fold(call(300_000, 9_000))
	s.refresh(prices)
	if s.Usage.InputTokens != 500_000 || s.Usage.OutputTokens != 10_000 || s.CostUSD == nil || *s.CostUSD != 0.6 {
		t.Fatalf("so far: usage %+v, cost %v", s.Usage, s.CostUSD)
	}
	if why := s.overCostLimit(); why != "over its cost limit of $0.50: $0.60 spent" {
		t.Fatalf("limit: %q", why)
	}
	final := 0.42
	s.fold(Event{Type: EventTurnCompleted, Usage: &Usage{InputTokens: 400_000, OutputTokens: 2_000}, CostUSD: &final})
	s.refresh(prices)
	if tr := s.Turns[0]; tr.UsageSoFar != nil || s.Usage.InputTokens != 400_000 || *s.CostUSD != 0.42 {
		t.Fatalf("after the report: turn %+v, usage %+v, cost %v", tr, s.Usage, *s.CostUSD)
	}
	// A later turn stopped before its report keeps what its calls used.
	s.Turns = append(s.Turns, Turn{N: 2})
	s.fold(call(10_000, 0))
	s.refresh(prices)
	if s.Usage.InputTokens != 410_000 || *s.CostUSD != 0.43 {
		t.Fatalf("a turn cut short: usage %+v, cost %v", s.Usage, *s.CostUSD)
	}
}
