package cli

import (
	"bufio"
	"strings"

	"github.com/mattn/go-runewidth"
)

// Table prints rows for people or for programs. On a terminal, columns are
// as wide as their content, the flexible column gets what is left of the
// width (cut with "…"), optional columns give way when even that does not
// fit, and cells may be coloured. Piped, it is tab-separated and
// untruncated, one line per row after the header, so awk and cut work.
// Either way it is written in one go, through one buffer.
type Table struct {
	io   *Streams
	cols []Column
	rows [][]Cell
	// plain is set when the table is piped: such a table needs no column
	// widths, so each row goes straight out and none is held.
	plain *bufio.Writer
}

// NewTable starts a table written to io.out by flush. A piped one has its
// header written at once.
func NewTable(io *Streams, cols ...Column) *Table {
	t := &Table{io: io, cols: cols}
	if !io.OutTTY {
		t.plain = bufio.NewWriterSize(io.Out, 64<<10)
		for i, c := range cols {
			if i > 0 {
				t.plain.WriteByte('\t')
			}
			if c.RawTitle != "" {
				t.plain.WriteString(c.RawTitle)
			} else {
				t.plain.WriteString(c.Title)
			}
		}
		t.plain.WriteByte('\n')
	}
	return t
}

type Column struct {
	Title string
	// RawTitle heads the column piped, where its cells differ in kind
	// (an age on a terminal, a time piped); Title if empty.
	RawTitle string
	// Flex takes what width is left; at most one column has it.
	Flex bool
	// Drop orders optional columns: the lowest gives way first; 0 never.
	Drop int
}

type Cell struct {
	Text string // shown on a terminal
	Raw  string // piped; Text if empty
	SGR  string // colour on a terminal
}

func (t *Table) Add(cells ...Cell) {
	if t.plain != nil {
		writePlainRow(t.plain, cells)
		return
	}
	t.rows = append(t.rows, cells)
}

// minFlex is the least width the flexible column keeps before optional
// columns are dropped.
const minFlex = 16

// Flush writes what is left of the table and reports the first error
// writing it met.
func (t *Table) Flush() error {
	if t.plain != nil {
		return t.plain.Flush()
	}
	bw := bufio.NewWriterSize(t.io.Out, 64<<10)
	t.writeFitted(bw)
	return bw.Flush()
}

// cellSeparators keeps a piped cell on its line and in its column.
var cellSeparators = strings.NewReplacer("\t", " ", "\n", " ")

func writePlainRow(w *bufio.Writer, r []Cell) {
	for i, c := range r {
		if i > 0 {
			w.WriteByte('\t')
		}
		v := c.Raw
		if v == "" {
			v = c.Text
		}
		if strings.IndexByte(v, '\t') >= 0 || strings.IndexByte(v, '\n') >= 0 {
			v = cellSeparators.Replace(v)
		}
		w.WriteString(v)
	}
	w.WriteByte('\n')
}

func (t *Table) writeFitted(w *bufio.Writer) {
	widths := make([]int, len(t.cols))
	for i, c := range t.cols {
		widths[i] = runewidth.StringWidth(c.Title)
	}
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], runewidth.StringWidth(c.Text))
		}
	}
	shown := make([]bool, len(t.cols))
	for i := range shown {
		shown[i] = true
	}
	flex := -1
	for i, c := range t.cols {
		if c.Flex {
			flex = i
		}
	}
	total := func() int {
		n, sep := 0, 0
		for i, w := range widths {
			if shown[i] {
				n += w + sep
				sep = 2
			}
		}
		return n
	}
	// Fit: optional columns give way until the flexible one can have
	// minFlex cells; then it gets what is left, up to its content.
	natural := -1
	if flex >= 0 {
		natural = widths[flex]
		widths[flex] = min(natural, minFlex)
	}
	for total() > t.io.Width {
		victim := -1
		for i, c := range t.cols {
			if shown[i] && c.Drop > 0 && (victim < 0 || c.Drop < t.cols[victim].Drop) {
				victim = i
			}
		}
		if victim < 0 {
			break
		}
		shown[victim] = false
	}
	if flex >= 0 {
		widths[flex] = max(1, min(natural, widths[flex]+t.io.Width-total()))
	}
	line := func(cells []Cell, header bool) {
		var b strings.Builder
		last := len(cells) - 1
		for last >= 0 && !shown[last] {
			last--
		}
		sep := ""
		for i, c := range cells {
			if !shown[i] {
				continue
			}
			b.WriteString(sep)
			sep = "  "
			text := runewidth.Truncate(c.Text, widths[i], "…")
			pad := widths[i] - runewidth.StringWidth(text)
			if i == last {
				pad = 0
			}
			sgr := c.SGR
			if header {
				sgr = Bold
			}
			b.WriteString(t.io.Paint(sgr, text))
			b.WriteString(strings.Repeat(" ", pad))
		}
		w.WriteString(b.String() + "\n")
	}
	head := make([]Cell, len(t.cols))
	for i, c := range t.cols {
		head[i] = Cell{Text: c.Title}
	}
	line(head, true)
	for _, r := range t.rows {
		line(r, false)
	}
}
