package sessionlist

import (
	"fmt"
	"strings"

	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/tui/styles"
)

type column struct {
	title string
	cell  func(s *sessions.Session) string
	// drop orders the columns that give way when the width is short:
	// lowest first; 0 never (the id, the status, the adapter, the model).
	drop  int
	width int
}

// minTask is the least width of the task column before other columns give
// way.
const minTask = 16

func (m Model) allColumns() []column {
	return []column{
		{title: "ID", cell: func(s *sessions.Session) string { return sessions.ShortID(s.ID) }},
		{title: "STATUS", cell: func(s *sessions.Session) string { return m.status(s) }},
		{title: "ADAPTER", cell: func(s *sessions.Session) string { return render.SafeLine(s.Adapter) }},
		{title: "MODEL", cell: func(s *sessions.Session) string { return render.SafeLine(s.Model) }},
		{title: "TURN", drop: 3, cell: func(s *sessions.Session) string { return fmt.Sprint(s.Turn) }},
		{title: "TOKENS", drop: 5, cell: func(s *sessions.Session) string { return render.SessionTokens(s) }},
		{title: "COST", drop: 4, cell: func(s *sessions.Session) string { return render.SessionCost(s) }},
		{title: "RUNTIME", drop: 2, cell: func(s *sessions.Session) string { return render.Runtime(s.Runtime(m.now)) }},
		{title: "SOURCE", drop: 1, cell: func(s *sessions.Session) string { return render.Source(s.Source) }},
		{title: "TASK", cell: func(s *sessions.Session) string { return render.SafeLine(s.Task) }},
	}
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

// columns size to their content (the rows shown and the titles) within the
// width: the task takes what is left, at least minTask cells, and the
// least useful columns give way first when even that does not fit.
func (m Model) columns() []column {
	cols := m.allColumns()
	last := min(len(m.rows), m.offset+max(1, m.height-1))
	for i := range cols[:len(cols)-1] {
		c := &cols[i]
		c.width = runewidth.StringWidth(c.title)
		for _, s := range m.rows[m.offset:last] {
			c.width = max(c.width, runewidth.StringWidth(c.cell(s)))
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
