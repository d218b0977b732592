package main

import (
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

// runJSON is a run as --json prints it: the documented fields
// (docs/orchestrate.md), none of the bookkeeping run.json also holds (its
// owner process, which workers' ends were read and announced, the
// per-worker accounts).
type runJSON struct {
	ID            string       `json:"id"`
	Task          string       `json:"task"`
	Model         string       `json:"model"`
	Dir           string       `json:"dir"`
	Status        runs.Status  `json:"status"`
	StopReason    string       `json:"stop_reason"`
	Summary       string       `json:"summary"`
	Steps         int          `json:"steps"`
	Limits        limitsJSON   `json:"limits"`
	CreatedAt     time.Time    `json:"created_at"`
	UpdatedAt     time.Time    `json:"updated_at"`
	EndedAt       *time.Time   `json:"ended_at"`
	Usage         record.Usage `json:"usage"`
	CostUSD       *float64     `json:"cost_usd"`
	WorkerUsage   record.Usage `json:"worker_usage"`
	WorkerCostUSD *float64     `json:"worker_cost_usd"`
	TotalTokens   int64        `json:"total_tokens"`
	TotalCostUSD  *float64     `json:"total_cost_usd"`
	Workers       []string     `json:"workers"`
	// TraceID is the run's OpenTelemetry trace (docs/telemetry.md).
	TraceID string `json:"trace_id"`
	// Isolation is where its workers worked by default; Changes what
	// became of each worker's change when the run ended.
	Isolation string              `json:"isolation"`
	Changes   []runs.WorkerChange `json:"changes"`
	// Question is what the model asked while the run waits for the
	// answer (status waiting), else null.
	Question *questionJSON `json:"question"`
}

type questionJSON struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Options []string  `json:"options"`
	AskedAt time.Time `json:"asked_at"`
}

type limitsJSON struct {
	MaxSteps   int     `json:"max_steps"`
	MaxCostUSD float64 `json:"max_cost_usd"`
	MaxTokens  int64   `json:"max_tokens"`
	MaxWorkers int     `json:"max_workers"`
	Timeout    string  `json:"timeout"`
}

func toRunJSON(r *runs.Record) runJSON {
	out := runJSON{ID: r.ID, Task: r.Task, Model: r.Model, Dir: r.Dir, Status: r.Status, StopReason: r.StopReason, Summary: r.Summary,
		Steps: r.Steps, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, EndedAt: r.EndedAt, Usage: r.Usage, CostUSD: r.CostUSD,
		WorkerUsage: r.WorkerUsage, WorkerCostUSD: r.WorkerCostUSD, TotalTokens: r.TotalTokens(), Workers: r.Workers,
		TraceID: runs.TraceOf(r.ID).String(),
		Limits: limitsJSON{MaxSteps: r.Limits.MaxSteps, MaxCostUSD: r.Limits.MaxCostUSD, MaxTokens: r.Limits.MaxTokens,
			MaxWorkers: r.Limits.MaxWorkers, Timeout: r.Limits.Timeout.String()}}
	if c, known := r.TotalCost(); known {
		out.TotalCostUSD = &c
	}
	if out.Workers == nil {
		out.Workers = []string{}
	}
	out.Isolation, out.Changes = r.Isolation, r.Changes
	if q := r.Question; q != nil && r.Status == runs.StatusWaiting {
		out.Question = &questionJSON{ID: q.ID, Text: q.Text, Options: q.Options, AskedAt: q.AskedAt}
		if out.Question.Options == nil {
			out.Question.Options = []string{}
		}
	}
	if out.Changes == nil {
		out.Changes = []runs.WorkerChange{}
	}
	return out
}

func runsJSON(list []*runs.Record) []runJSON {
	out := make([]runJSON, len(list))
	for i, r := range list {
		out[i] = toRunJSON(r)
	}
	return out
}
