package sessionlist

import (
	"fmt"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/tui/styles"
)

type column struct {
	title string
	cell  func(r Row) string
	// drop orders the columns that give way when the width is short:
	// lowest first; 0 never (the id, the status, the adapter, the model).
	drop  int
	width int
}

// minTask is the least width of the task column before other columns give
// way.
const minTask = 16

func (m Model) allColumns() []column {
	// session builds a cell of sessions; a run's row has its own text, or
	// none where the column says nothing of runs.
	session := func(f func(s *sessions.Session) string, run func(r *orchestrator.Record) string) func(Row) string {
		return func(r Row) string {
			if r.Run != nil {
				if run == nil {
					return ""
				}
				return run(r.Run)
			}
			return f(r.Session)
		}
	}
	return []column{
		{title: "ID", cell: m.id},
		{title: "STATUS", cell: session(m.status, m.runStatus)},
		{title: "ADAPTER", cell: session(func(s *sessions.Session) string { return render.SafeLine(s.Adapter) }, nil)},
		{title: "MODEL", cell: session(func(s *sessions.Session) string { return render.SafeLine(s.Model) },
			func(r *orchestrator.Record) string { return render.SafeLine(r.Model) })},
		{title: "TURN", drop: 3, cell: session(func(s *sessions.Session) string { return fmt.Sprint(s.Turn) }, nil)},
		{title: "TOKENS", drop: 5, cell: session(render.SessionTokens,
			func(r *orchestrator.Record) string { return render.Tokens(m.totals[r.ID].tokens) })},
		{title: "COST", drop: 4, cell: session(render.SessionCost,
			func(r *orchestrator.Record) string { return render.Cost(m.totals[r.ID].cost) })},
		{title: "RUNTIME", drop: 2, cell: session(func(s *sessions.Session) string { return render.Runtime(s.Runtime(m.now)) },
			func(r *orchestrator.Record) string { return render.Runtime(runRuntime(r, m.now)) })},
		{title: "SOURCE", drop: 1, cell: session(func(s *sessions.Session) string { return render.Source(s.Source) }, nil)},
		{title: "TASK", cell: session(func(s *sessions.Session) string { return render.SafeLine(s.Task) },
			func(r *orchestrator.Record) string { return render.SafeLine(r.Task) })},
	}
}

// id is the ID cell: a run reads as its workers' source does (run:ID),
// and its workers hang under it.
func (m Model) id(r Row) string {
	switch {
	case r.Run != nil:
		return RunKey(sessions.ShortID(r.Run.ID))
	case r.Worker && r.Last:
		return "└ " + sessions.ShortID(r.Session.ID)
	case r.Worker:
		return "├ " + sessions.ShortID(r.Session.ID)
	}
	return sessions.ShortID(r.Session.ID)
}

// status is the status cell: icon and status, and for an agent that has
// been silent a while, for how long.
func (m Model) status(s *sessions.Session) string {
	text := styles.Icon(s.Status) + " " + string(s.Status)
	if q := render.Quiet(s, m.now); q != "" {
		text += " · " + q
	}
	return text
}

// runStatus is a run's status cell, with its step of the most it may take.
func (m Model) runStatus(r *orchestrator.Record) string {
	return fmt.Sprintf("%s %s · step %d/%d", styles.RunIcon(r.Status), r.Status, r.Steps, r.Limits.MaxSteps)
}

// runRuntime is how long a run ran, or has been running.
func runRuntime(r *orchestrator.Record, now time.Time) time.Duration {
	end := now
	switch {
	case r.EndedAt != nil:
		end = *r.EndedAt
	case r.Status != orchestrator.StatusRunning:
		end = r.UpdatedAt
	}
	return max(0, end.Sub(r.CreatedAt))
}

// columns size to their content (the rows shown and the titles) within the
// width: the task takes what is left, at least minTask cells, and the
// least useful columns give way first when even that does not fit.
func (m Model) columns() []column {
	cols := m.allColumns()
	last := min(len(m.rows), m.offset+max(1, m.height-1))
	for i := range cols[:len(cols)-1] {
		c := &cols[i]
		c.width = runewidth.StringWidth(c.title)
		for _, r := range m.rows[m.offset:last] {
			c.width = max(c.width, runewidth.StringWidth(c.cell(r)))
		}
	}
	width := func(cs []column) int {
		w := 2 // the cursor and the attention mark
		for _, c := range cs[:len(cs)-1] {
			w += c.width + 1
		}
		return w
	}
	for width(cols)+minTask > m.width {
		victim := -1
		for i, c := range cols {
			if c.drop > 0 && (victim < 0 || c.drop < cols[victim].drop) {
				victim = i
			}
		}
		if victim < 0 {
			break
		}
		cols = append(cols[:victim], cols[victim+1:]...)
	}
	cols[len(cols)-1].width = max(8, m.width-width(cols))
	return cols
}

func fit(s string, w int) string {
	s = strings.Join(strings.Fields(s), " ")
	return runewidth.FillRight(runewidth.Truncate(s, w, "…"), w)
}
