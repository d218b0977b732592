package sessionlist

import (
	"fmt"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/tui/styles"
)

type column struct {
	title string
	cell  func(r Row) string
	// drop orders the columns that give way when the width is short:
	// lowest first; 0 never (the id, the status, the adapter, the model).
	drop int
	// short, if set, is a narrower cell the column falls back to before
	// it gives way; shorten orders that step among the drops.
	short   func(r Row) string
	shorten int
	width   int
}

// minTask is the least width of the task column before other columns give
// way.
const minTask = 16

func (m Model) allColumns() []column {
	// session builds a cell of sessions; a run's row has its own text, or
	// none where the column says nothing of runs.
	session := func(f func(s *record.Session) string, run func(r *runs.Record) string) func(Row) string {
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
		// A session's refused tool calls, worth a mark, give way before
		// what it changed does.
		{title: "STATUS", shorten: 55, cell: session(func(s *record.Session) string { return m.status(s, true) }, m.runStatus),
			short: session(func(s *record.Session) string { return m.status(s, false) }, m.runStatus)},
		{title: "ADAPTER", cell: session(func(s *record.Session) string { return render.SafeLine(s.Adapter) }, nil)},
		{title: "MODEL", cell: session(func(s *record.Session) string { return render.SafeLine(s.Model) },
			func(r *runs.Record) string { return render.SafeLine(r.Model) })},
		{title: "TURN", drop: 30, cell: session(func(s *record.Session) string { return fmt.Sprint(s.Turn) }, nil)},
		{title: "TOKENS", drop: 50, cell: session(render.SessionTokens,
			func(r *runs.Record) string { return render.Tokens(m.totals[r.ID].tokens) })},
		{title: "COST", drop: 40, cell: session(render.SessionCost,
			func(r *runs.Record) string { return render.Cost(m.totals[r.ID].cost) })},
		{title: "RUNTIME", drop: 20, cell: session(func(s *record.Session) string { return render.Runtime(s.Runtime(m.now)) },
			func(r *runs.Record) string { return render.Runtime(runRuntime(r, m.now)) })},
		{title: "SOURCE", drop: 10, cell: session(func(s *record.Session) string { return render.Source(s.Source) }, nil)},
		// What the worker changed is what v shows and L lands: of the
		// columns that give way, it is the last, and it first gives up
		// the words ("+120 -8 in 5 files" becomes "+120 -8").
		{title: "CHANGES", drop: 60, shorten: 45, cell: read(session(func(s *record.Session) string { return render.SafeLine(s.ChangesText()) }, nil)),
			short: read(session(shortChanges, nil))},
		{title: "TASK", cell: read(session(func(s *record.Session) string { return render.SafeLine(s.Task) },
			func(r *runs.Record) string { return render.SafeLine(r.Task) }))},
	}
}

// read is a cell that only a session's summary has: a row whose summary is
// being read says so.
func read(cell func(Row) string) func(Row) string {
	return func(r Row) string {
		if r.Partial {
			return "…"
		}
		return cell(r)
	}
}

// id is the ID cell: a run reads as its workers' source does (run:ID),
// and its workers hang under it.
func (m Model) id(r Row) string {
	switch {
	case r.Run != nil:
		return RunKey(record.ShortID(r.Run.ID))
	case r.Worker && r.Last:
		return "└ " + record.ShortID(r.Session.ID)
	case r.Worker:
		return "├ " + record.ShortID(r.Session.ID)
	}
	return record.ShortID(r.Session.ID)
}

// runnerStateWidth bounds what the status cell says of a job.
const runnerStateWidth = 40

// status is the status cell: icon and status, for an agent that has
// been silent a while, for how long, and, with denied, how many of its
// tool calls its permissions refused (work it could not do, whatever its
// status says).
func (m Model) status(s *record.Session, denied bool) string {
	text := styles.Icon(s.Status()) + " " + string(s.Status())
	if s.RunnerState != "" {
		// Where its job is, in its runner's words: "queued · slurm 1234
		// (Resources)", "slurm unreachable".
		// Clipped: a queue reason can be a long sentence.
		text += " · " + render.Clip(s.RunnerState, runnerStateWidth)
	}
	if q := render.Quiet(s, m.now); q != "" {
		text += " · " + q
	}
	if denied && s.Denied > 0 {
		text += fmt.Sprintf(" · %d denied", s.Denied)
	}
	return text
}

// shortChanges is the CHANGES cell in few cells: a change's lines added
// and deleted, without its files.
func shortChanges(s *record.Session) string {
	text := s.ChangesText()
	if w := s.Workspace; w != nil && w.Changes != nil && text == w.Changes.String() {
		return fmt.Sprintf("+%d -%d", w.Changes.Added, w.Changes.Deleted)
	}
	return render.SafeLine(text)
}

// runStatus is a run's status cell, with its step of the most it may take.
func (m Model) runStatus(r *runs.Record) string {
	return fmt.Sprintf("%s %s · step %d/%d", styles.RunIcon(string(r.Status)), r.Status, r.Steps, r.Limits.MaxSteps)
}

// runRuntime is how long a run ran, or has been running.
func runRuntime(r *runs.Record, now time.Time) time.Duration {
	end := now
	switch {
	case r.EndedAt != nil:
		end = *r.EndedAt
	case !r.Status.Live():
		end = r.UpdatedAt
	}
	return max(0, end.Sub(r.CreatedAt))
}

// columns size to their content (the rows shown and the titles) within the
// width: the task takes what is left, at least minTask cells, and the
// least useful columns give way first when even that does not fit.
func (m Model) columns(shown []Row) []column {
	cols := m.allColumns()
	measure := func(c *column) {
		c.width = runewidth.StringWidth(c.title)
		for _, r := range shown {
			c.width = max(c.width, runewidth.StringWidth(c.cell(r)))
		}
	}
	for i := range cols[:len(cols)-1] {
		measure(&cols[i])
	}
	width := func(cs []column) int {
		w := 2 // the cursor and the attention mark
		for _, c := range cs[:len(cs)-1] {
			w += c.width + 1
		}
		return w
	}
	for width(cols)+minTask > m.Width {
		// The next step is the lowest drop or shorten.
		victim, order, shorten := -1, 0, false
		for i, c := range cols {
			if c.drop > 0 && (victim < 0 || c.drop < order) {
				victim, order, shorten = i, c.drop, false
			}
			if c.short != nil && c.shorten > 0 && (victim < 0 || c.shorten < order) {
				victim, order, shorten = i, c.shorten, true
			}
		}
		switch {
		case victim < 0:
		case shorten:
			c := &cols[victim]
			c.cell, c.short = c.short, nil
			measure(c)
			continue
		default:
			cols = append(cols[:victim], cols[victim+1:]...)
			continue
		}
		break
	}
	cols[len(cols)-1].width = max(8, m.Width-width(cols))
	return cols
}

func fit(s string, w int) string {
	s = strings.Join(strings.Fields(s), " ")
	return runewidth.FillRight(runewidth.Truncate(s, w, "…"), w)
}
