package orchestrator

import (
	"context"
	"errors"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
)

// refresh reads the run's workers and brings the accounts up to date. A
// worker the record does not know (started just before a crash) is
// adopted: its source says it is the run's.
func (r *Run) refresh(ctx context.Context) {
	list, err := r.opt.Sessions.List(ctx, listing.Options{Source: record.RunSource(r.rec.ID)})
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
		r.opt.Log.Warn("list the run's workers", "err", err)
		return
	}
	r.workers = list
	r.mu.Lock()
	defer r.mu.Unlock()
	known := map[string]bool{}
	for _, id := range r.rec.Workers {
		known[id] = true
	}
	// Oldest first, so adopted workers join in the order they started.
	for i := len(list) - 1; i >= 0; i-- {
		s := list[i]
		if !known[s.ID] {
			r.rec.Workers = append(r.rec.Workers, s.ID)
		}
		cost := s.CostUSD
		if cost == nil && s.Usage.IsZero() {
			zero := 0.0
			cost = &zero // nothing ran: nothing to price
		}
		r.rec.Accounts[s.ID] = runs.Account{Usage: s.Usage, CostUSD: cost, Status: s.Status()}
	}
	var u record.Usage
	total, known2 := 0.0, true
	for _, a := range r.rec.Accounts {
		u = u.Add(a.Usage)
		if a.CostUSD == nil {
			known2 = false
		} else {
			total += *a.CostUSD
		}
	}
	r.rec.WorkerUsage = u
	r.rec.WorkerCostUSD = nil
	if known2 {
		total = record.RoundCost(total)
		r.rec.WorkerCostUSD = &total
	}
	r.counts = runs.Totals{}
	for _, s := range list {
		switch {
		case !s.Settled():
			r.counts.WorkersRunning++
		case s.Status() == record.StatusCompleted:
			r.counts.WorkersDone++
		default:
			r.counts.WorkersFailed++
		}
	}
}

// totals are the running totals for the usage event.
func (r *Run) totals() *runs.Totals {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.counts
	t.Usage, t.CostUSD, t.WorkerUsage, t.WorkerCostUSD = r.rec.Usage, r.rec.CostUSD, r.rec.WorkerUsage, r.rec.WorkerCostUSD
	return &t
}

// addUsage accounts one model call.
func (r *Run) addUsage(u record.Usage) *float64 {
	cost := r.prices.Cost(r.set.Model, u)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Usage = r.rec.Usage.Add(u)
	switch {
	case cost == nil:
		r.rec.CostUSD = nil // one call of unknown price: the total is unknown
	case r.rec.CostUSD != nil:
		c := record.RoundCost(*r.rec.CostUSD + *cost)
		r.rec.CostUSD = &c
	}
	return cost
}
