package sessionlist

import (
	"sort"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
)

// Row is one line of the list: an orchestrator run, or a session. A run's
// workers (the sessions whose source is the run) come right under it.
type Row struct {
	Run     *runs.Record
	Session *sessions.Session
	// Worker says the session is shown under its run; Last that it is the
	// last one shown there.
	Worker, Last bool
}

// Key names the row: "run:ID" for a run, the session id for a session.
func (r Row) Key() string {
	if r.Run != nil {
		return RunKey(r.Run.ID)
	}
	return r.Session.ID
}

// RunKey is the key of run id's row.
func RunKey(id string) string { return "run:" + id }

// totals are a run's tokens and cost with its workers', as they are now:
// the live sessions where they exist, what the run last saw otherwise (a
// deleted worker). cost is nil when a price is unknown.
type totals struct {
	tokens int64
	cost   *float64
}

func runTotals(r *runs.Record, workers []*sessions.Session) totals {
	t := totals{tokens: r.Usage.TotalTokens}
	sum, known := 0.0, r.CostUSD != nil
	if known {
		sum = *r.CostUSD
	}
	live := map[string]bool{}
	for _, s := range workers {
		live[s.ID] = true
		t.tokens += s.Usage.TotalTokens
		switch {
		case s.CostUSD != nil:
			sum += *s.CostUSD
		case !s.Usage.IsZero():
			known = false
		}
	}
	for id, a := range r.Accounts {
		if live[id] {
			continue
		}
		t.tokens += a.Usage.TotalTokens
		switch {
		case a.CostUSD != nil:
			sum += *a.CostUSD
		case !a.Usage.IsZero():
			known = false
		}
	}
	if known {
		t.cost = &sum
	}
	return t
}

func (m *Model) rebuild() {
	m.rows = m.rows[:0]
	m.running = 0
	byRun := map[string][]*sessions.Session{}
	var top []Row
	for _, s := range m.all {
		if !s.Settled() {
			m.running++
		}
		if s.Source.Kind == sessions.SourceRun && m.runs[s.Source.Run] != nil {
			byRun[s.Source.Run] = append(byRun[s.Source.Run], s)
			continue
		}
		if m.visible(s) && m.matches(sessionText(s)) {
			top = append(top, Row{Session: s})
		}
	}
	m.totals = make(map[string]totals, len(m.runs))
	shown := map[string][]*sessions.Session{}
	for id, r := range m.runs {
		m.totals[id] = runTotals(r, byRun[id])
		if r.Status == runs.StatusRunning {
			m.running++
		}
		// A run that matches shows its workers; one that does not is
		// shown for the workers that do.
		match := m.matches(runText(r))
		for _, s := range byRun[id] {
			if m.visible(s) && (match || m.matches(sessionText(s))) {
				shown[id] = append(shown[id], s)
			}
		}
		finished := r.Status != runs.StatusRunning
		if match && !(m.hideFinished && finished) || len(shown[id]) > 0 {
			top = append(top, Row{Run: r})
		}
	}
	m.sortRows(top)
	for _, r := range top {
		m.rows = append(m.rows, r)
		if r.Run == nil {
			continue
		}
		ws := make([]Row, len(shown[r.Run.ID]))
		for i, s := range shown[r.Run.ID] {
			ws[i] = Row{Session: s, Worker: true}
		}
		m.sortRows(ws)
		if len(ws) > 0 {
			ws[len(ws)-1].Last = true
		}
		m.rows = append(m.rows, ws...)
	}
	// Keep the cursor on the row it was on.
	m.cursor = 0
	for i, r := range m.rows {
		if r.Key() == m.selected {
			m.cursor = i
			break
		}
	}
	m.clamp()
}

func (m *Model) visible(s *sessions.Session) bool { return !(m.hideFinished && s.Settled()) }

func (m *Model) matches(text string) bool {
	return m.filter == "" || strings.Contains(strings.ToLower(text), m.filter)
}

func sessionText(s *sessions.Session) string {
	return strings.Join([]string{s.ID, s.Task, s.Model, s.Adapter, string(s.Status), s.Source.String(), s.ChangesText()}, " ")
}

func runText(r *runs.Record) string {
	return strings.Join([]string{RunKey(r.ID), r.Task, r.Model, string(r.Status)}, " ")
}

func (m *Model) sortRows(rows []Row) {
	sort.Slice(rows, func(i, j int) bool { return m.less(rows[i], rows[j]) })
}

func (m *Model) less(a, b Row) bool {
	switch m.sort {
	case ByStatus:
		if ra, rb := rowRank(a), rowRank(b); ra != rb {
			return ra < rb
		}
	case ByTokens:
		if ta, tb := m.tokensOf(a), m.tokensOf(b); ta != tb {
			return ta > tb
		}
	case ByCost:
		if ca, cb := m.costOf(a), m.costOf(b); ca != cb {
			return ca > cb
		}
	}
	if ca, cb := created(a), created(b); !ca.Equal(cb) {
		return ca.After(cb)
	}
	return a.Key() < b.Key()
}

// rank orders statuses by how much they want attention.
func rank(st sessions.Status) int {
	return map[sessions.Status]int{sessions.StatusFailed: 0, sessions.StatusRunning: 1, sessions.StatusPending: 2,
		sessions.StatusKilled: 3, sessions.StatusCompleted: 4}[st]
}

func rowRank(r Row) int {
	if r.Run == nil {
		return rank(r.Session.Status)
	}
	return map[runs.Status]int{runs.StatusFailed: 0, runs.StatusRunning: 1, runs.StatusLimited: 2,
		runs.StatusInterrupted: 3, runs.StatusCompleted: 4}[r.Run.Status]
}

func (m *Model) tokensOf(r Row) int64 {
	if r.Run != nil {
		return m.totals[r.Run.ID].tokens
	}
	return r.Session.Usage.TotalTokens
}

func (m *Model) costOf(r Row) float64 {
	var c *float64
	if r.Run != nil {
		c = m.totals[r.Run.ID].cost
	} else {
		c = r.Session.CostUSD
	}
	if c == nil {
		return -1
	}
	return *c
}

func created(r Row) time.Time {
	if r.Run != nil {
		return r.Run.CreatedAt
	}
	return r.Session.CreatedAt
}
