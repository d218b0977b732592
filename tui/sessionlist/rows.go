package sessionlist

import (
	"sort"
	"strings"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

// Row is one line of the list: an orchestrator run, or a session. A run's
// workers (the sessions whose source is the run) come right under it.
type Row struct {
	Run     *runs.Record
	Session *record.Session
	// Worker says the session is shown under its run; Last that it is the
	// last one shown there.
	Worker, Last bool
	// Partial says the session is one of the listing's whose summary is
	// being read: it has what the listing holds of it, no task or changes.
	Partial bool
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

// ref is a row as the list keeps it: a run, a session held whole, or an
// entry of the listing (at), made into a Row only when it is drawn.
type ref struct {
	run          *runs.Record
	s            *record.Session
	at           int32 // with neither run nor s
	worker, last bool
}

func (m Model) row(r ref) Row {
	out := Row{Run: r.run, Session: r.s, Worker: r.worker, Last: r.last}
	if r.run == nil && r.s == nil {
		out.Session, out.Partial = m.listed.session(int(r.at))
	}
	return out
}

func (m Model) key(r ref) string {
	switch {
	case r.run != nil:
		return RunKey(r.run.ID)
	case r.s != nil:
		return r.s.ID
	}
	return m.listed.l.ID(int(r.at))
}

// totals are a run's tokens and cost with its workers', as they are now:
// the live sessions where they exist, what the run last saw otherwise (a
// deleted worker). cost is nil when a price is unknown.
type totals struct {
	tokens int64
	cost   *float64
}

// runTotals adds up run r with its live workers and those of the listing.
func (m *Model) runTotals(r *runs.Record, live []ref, listed []int32) totals {
	t := totals{tokens: r.Usage.TotalTokens}
	sum, known := 0.0, r.CostUSD != nil
	if known {
		sum = *r.CostUSD
	}
	seen := map[string]bool{}
	for _, w := range live {
		s := w.s
		seen[s.ID] = true
		t.tokens += s.Usage.TotalTokens
		switch {
		case s.CostUSD != nil:
			sum += *s.CostUSD
		case !s.Usage.IsZero():
			known = false
		}
	}
	for _, i := range listed {
		seen[m.listed.l.ID(int(i))] = true
		k := &m.listed.keys[i]
		t.tokens += k.tokens
		switch {
		case k.cost >= 0:
			sum += k.cost
		case k.tokens != 0:
			known = false
		}
	}
	for id, a := range r.Accounts {
		if seen[id] {
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

// rebuild lays the rows out again: every session and run, filtered and
// sorted, each run's workers under it. The listing's entries come in the
// sort order kept for them; the sessions held whole and the runs, few,
// are sorted and merged in. It costs a pass over the listing's keys, no
// read of any session.
func (m *Model) rebuild() {
	m.rows = m.rows[:0]
	m.running = 0
	x := m.listed
	byRun := map[string][]ref{}
	var top []ref
	for _, s := range m.live {
		if !s.Settled() {
			m.running++
		}
		if s.Source.Kind == record.SourceRun && m.runs[s.Source.Run] != nil {
			byRun[s.Source.Run] = append(byRun[s.Source.Run], ref{s: s})
			continue
		}
		if m.visible(s) && m.matches(sessionText(s)) {
			top = append(top, ref{s: s})
		}
	}
	listedByRun := map[string][]int32{}
	listedTop := x.scratch[:0]
	for _, i := range x.order(m.sort) {
		if x.off[i] {
			continue
		}
		if run := x.runOf(i); run != "" && m.runs[run] != nil {
			listedByRun[run] = append(listedByRun[run], i)
			continue
		}
		// The listing's sessions are settled.
		if !m.hideFinished && x.passes(i, m.filter) {
			listedTop = append(listedTop, i)
		}
	}
	x.scratch = listedTop
	m.totals = make(map[string]totals, len(m.runs))
	shown := map[string][]ref{}
	shownListed := map[string][]int32{}
	for id, r := range m.runs {
		m.totals[id] = m.runTotals(r, byRun[id], listedByRun[id])
		if r.Status.Live() {
			m.running++
		}
		// A run that matches shows its workers; one that does not is
		// shown for the workers that do.
		match := m.matches(runText(r))
		for _, w := range byRun[id] {
			if m.visible(w.s) && (match || m.matches(sessionText(w.s))) {
				shown[id] = append(shown[id], w)
			}
		}
		if !m.hideFinished {
			for _, i := range listedByRun[id] {
				if match || x.passes(i, m.filter) {
					shownListed[id] = append(shownListed[id], i)
				}
			}
		}
		finished := !r.Status.Live()
		if match && !(m.hideFinished && finished) || len(shown[id])+len(shownListed[id]) > 0 {
			top = append(top, ref{run: r})
		}
	}
	m.sortRefs(top)
	m.rows = m.merge(m.rows, top, listedTop, func(rows []ref, r ref) []ref {
		rows = append(rows, r)
		if r.run == nil {
			return rows
		}
		ws := shown[r.run.ID]
		m.sortRefs(ws)
		n := len(rows)
		rows = m.merge(rows, ws, shownListed[r.run.ID], func(rows []ref, w ref) []ref {
			w.worker = true
			return append(rows, w)
		})
		if len(rows) > n {
			rows[len(rows)-1].last = true
		}
		return rows
	})
	// Keep the cursor on the row it was on.
	m.cursor = 0
	for i, r := range m.rows {
		if m.key(r) == m.selected {
			m.cursor = i
			break
		}
	}
	m.clamp()
}

// merge appends to rows, through add, the refs of sorted (in less's order)
// and the listing's entries of listed (in the same order), merged.
func (m *Model) merge(rows, sorted []ref, listed []int32, add func([]ref, ref) []ref) []ref {
	j := 0
	for _, r := range sorted {
		for ; j < len(listed) && m.less(ref{at: listed[j]}, r); j++ {
			rows = add(rows, ref{at: listed[j]})
		}
		rows = add(rows, r)
	}
	for ; j < len(listed); j++ {
		rows = add(rows, ref{at: listed[j]})
	}
	return rows
}

func (m *Model) visible(s *record.Session) bool { return !(m.hideFinished && s.Settled()) }

func (m *Model) matches(text string) bool {
	return m.filter == "" || strings.Contains(strings.ToLower(text), m.filter)
}

func sessionText(s *record.Session) string {
	return strings.Join([]string{s.ID, s.Task, s.Model, s.Adapter, string(s.Status()), s.Source.String(), s.ChangesText()}, " ")
}

func runText(r *runs.Record) string {
	return strings.Join([]string{RunKey(r.ID), r.Task, r.Model, string(r.Status)}, " ")
}

func (m *Model) sortRefs(rows []ref) {
	sort.SliceStable(rows, func(i, j int) bool { return m.less(rows[i], rows[j]) })
}

func (m *Model) less(a, b ref) bool {
	switch m.sort {
	case ByStatus:
		if ra, rb := m.rankOf(a), m.rankOf(b); ra != rb {
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
	if ca, cb := m.createdOf(a), m.createdOf(b); ca != cb {
		return ca > cb
	}
	return m.key(a) < m.key(b)
}

// rank orders statuses by how much they want attention.
func rank(st record.Status) int {
	return map[record.Status]int{record.StatusFailed: 0, record.StatusRunning: 1, record.StatusAttached: 1, record.StatusPending: 2,
		record.StatusKilled: 3, record.StatusCompleted: 4}[st]
}

func (m *Model) rankOf(r ref) int {
	switch {
	case r.run != nil:
		// A run that asks you comes first: it waits on nobody else.
		return map[runs.Status]int{runs.StatusWaiting: -1, runs.StatusFailed: 0, runs.StatusRunning: 1, runs.StatusLimited: 2,
			runs.StatusInterrupted: 3, runs.StatusCompleted: 4}[r.run.Status]
	case r.s != nil:
		return rank(r.s.Status())
	}
	return int(m.listed.keys[r.at].rank)
}

func (m *Model) tokensOf(r ref) int64 {
	switch {
	case r.run != nil:
		return m.totals[r.run.ID].tokens
	case r.s != nil:
		return r.s.Usage.TotalTokens
	}
	return m.listed.keys[r.at].tokens
}

func (m *Model) costOf(r ref) float64 {
	var c *float64
	switch {
	case r.run != nil:
		c = m.totals[r.run.ID].cost
	case r.s != nil:
		c = r.s.CostUSD
	default:
		return m.listed.keys[r.at].cost
	}
	if c == nil {
		return -1
	}
	return *c
}

func (m *Model) createdOf(r ref) int64 {
	switch {
	case r.run != nil:
		return r.run.CreatedAt.UnixNano()
	case r.s != nil:
		return r.s.CreatedAt.UnixNano()
	}
	return m.listed.keys[r.at].created
}
