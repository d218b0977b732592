package orchestrator

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

// observationPrefix starts the observation; it is sent as the last input
// item of every call, refreshed each time, and never kept in the
// conversation.
const observationPrefix = "[zwarm observation]"

// observe writes the observation for the coming step. It returns the
// workers it announces as finished; announced records them once the model
// has received it.
func (r *Run) observe(step int) (string, map[string]time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, lim := r.rec, r.set.Limits
	var b strings.Builder
	fmt.Fprintf(&b, "%s Step %d of %d.", observationPrefix, step, lim.MaxSteps)
	switch left := lim.MaxSteps - step; {
	case left <= 0:
		b.WriteString(" This is the last step: wrap up.")
	case left <= 3:
		fmt.Fprintf(&b, " Only %s left after this one: wrap up.", render.Plural(left, "step"))
	}
	elapsed := time.Since(r.started)
	fmt.Fprintf(&b, " Time: %s", render.Runtime(elapsed))
	if t := lim.Timeout.Duration; t > 0 {
		fmt.Fprintf(&b, " of %s", render.Runtime(t))
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "Tokens: %s (you %s, workers %s", render.Tokens(rec.TotalTokens()), render.Tokens(rec.Usage.TotalTokens), render.Tokens(rec.WorkerUsage.TotalTokens))
	if lim.MaxTokens > 0 {
		fmt.Fprintf(&b, "; limit %s", render.Tokens(lim.MaxTokens))
	}
	cost, known := rec.TotalCost()
	costText := fmt.Sprintf("$%.4f", cost)
	if !known {
		costText += " (some prices unknown)"
	}
	fmt.Fprintf(&b, "). Cost: %s (you %s, workers %s", costText, render.Cost(rec.CostUSD), render.Cost(rec.WorkerCostUSD))
	if lim.MaxCostUSD > 0 {
		fmt.Fprintf(&b, "; limit %s", render.Limit(lim.MaxCostUSD))
	}
	b.WriteString(").\n")
	c := r.counts
	fmt.Fprintf(&b, "Workers: %d running, %d completed, %d failed or killed", c.WorkersRunning, c.WorkersDone, c.WorkersFailed)
	if lim.MaxWorkers > 0 {
		fmt.Fprintf(&b, " (at most %d running at once)", lim.MaxWorkers)
	}
	b.WriteString(".")
	if line := changesLine(r.workers, r.files); line != "" {
		b.WriteString("\n" + line)
	}
	lines, marks := r.news()
	if news := lines; len(news) > 0 {
		if r.resumed {
			b.WriteString("\nThe run was stopped and has been resumed. Finished since your last step (some while it was stopped): ")
		} else {
			b.WriteString("\nFinished since your last step: ")
		}
		b.WriteString(strings.Join(news, "; "))
		b.WriteString(". wait, check_session or get_trajectory tell you more.")
	}
	return b.String(), marks
}

// announced records that the model received the news of these workers.
func (r *Run) announced(marks map[string]time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.Reported == nil {
		r.rec.Reported = map[string]time.Time{}
	}
	for id, at := range marks {
		r.rec.Reported[id] = at
	}
	r.resumed = false
}

// news lists the workers that finished and were not announced yet, with
// the ends to record once they are. Callers hold r.mu.
func (r *Run) news() ([]string, map[string]time.Time) {
	marks := map[string]time.Time{}
	var done []*record.Session
	for _, s := range r.workers {
		if !s.Settled() || s.EndedAt == nil {
			continue
		}
		if at, ok := r.rec.Reported[s.ID]; ok && !at.Before(*s.EndedAt) {
			continue
		}
		marks[s.ID] = *s.EndedAt
		if r.seen.Unread(s) { // what a tool already showed is no news
			done = append(done, s)
		}
	}
	sort.Slice(done, func(i, j int) bool { return done[i].EndedAt.Before(*done[j].EndedAt) })
	out := make([]string, 0, len(done))
	for _, s := range done {
		line := fmt.Sprintf("%s %s (turn %d)", s.ID, s.Status(), s.Turn)
		if s.Status() != record.StatusCompleted && s.Error != "" {
			line += ": " + render.Clip(s.Error, 160)
		}
		out = append(out, line)
	}
	return out, marks
}
