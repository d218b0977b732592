package web

import (
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// A running agent that has reported no usage yet has tokens and a cost
// not known yet ("–", as zwarm ls says), not 0 and $0.
func TestTheTokensAndCostOfARunningSessionAreNotKnownYet(t *testing.T) {
	s := record.Session{ID: "0a1b2c3d-0000-4000-8000-000000000001", Turn: 1, CreatedAt: time.Now(), Turns: []record.Turn{{N: 1}}}
	sessionstest.SetStatus(&s, record.StatusRunning)
	sessionstest.SetStatus(&s.Turns[0], record.StatusRunning)
	if j := toJSON(&s); j.TokensText != "–" || j.CostText != "–" {
		t.Fatalf("running, nothing reported: tokens %q, cost %q", j.TokensText, j.CostText)
	}
	cost := 0.0042
	s.Usage, s.CostUSD = record.Usage{InputTokens: 1200, OutputTokens: 30, TotalTokens: 1230}, &cost
	if j := toJSON(&s); j.TokensText != "1.2k" || j.CostText != "$0.0042" {
		t.Fatalf("running, 1,230 tokens reported: tokens %q, cost %q", j.TokensText, j.CostText)
	}
}
