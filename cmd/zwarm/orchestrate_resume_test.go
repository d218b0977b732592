package main

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

// The resume hint raises the limit that stopped the run, whichever it
// was: resumed as it was, the run would stop again at once.
func TestTheResumeHintRaisesTheLimitThatStoppedTheRun(t *testing.T) {
	cost := func(c float64) *float64 { return &c }
	limits := runs.Limits{MaxSteps: 10, MaxCostUSD: 0.5, MaxTokens: 5000}
	for _, c := range []struct {
		limit string
		rec   runs.Record
		want  string
	}{
		{"max_steps", runs.Record{Steps: 10}, " --max-steps 20"},
		// Twice what it spent, which passed the limit ($0.55).
		{"max_cost", runs.Record{Steps: 3, CostUSD: cost(0.3), WorkerCostUSD: cost(0.25)}, " --max-cost 1.1"},
		{"max_tokens", runs.Record{Steps: 3, CostUSD: cost(0.01), WorkerCostUSD: cost(0), Usage: record.Usage{TotalTokens: 5000}}, " --max-tokens 10000"},
		{"timeout", runs.Record{Steps: 3, CostUSD: cost(0.01), WorkerCostUSD: cost(0)}, ""},
	} {
		rec := c.rec
		rec.ID, rec.Status, rec.Limits = "1a2b3c4d-0000-4000-8000-000000000001", runs.StatusLimited, limits
		got := resumeCommand(&cobra.Command{}, &rec)
		if want := "zwarm orchestrate --resume 1a2b3c4d" + c.want; got != want {
			t.Errorf("%s: %q, want %q", c.limit, got, want)
		}
		if got := rec.LimitReached(); got != c.limit {
			t.Errorf("LimitReached %q, want %q", got, c.limit)
		}
	}
}
