package main

import (
	"bufio"
	"strings"

	"github.com/mattn/go-runewidth"
)

// table prints rows for people or for programs. On a terminal, columns are
// as wide as their content, the flexible column gets what is left of the
// width (cut with "…"), optional columns give way when even that does not
// fit, and cells may be coloured. Piped, it is tab-separated and
// untruncated, one line per row after the header, so awk and cut work.
// Either way it is written in one go, through one buffer.
type table struct {
	io   *streams
	cols []column
	rows [][]cell
	// plain is set when the table is piped: such a table needs no column
	// widths, so each row goes straight out and none is held.
	plain *bufio.Writer
}

// newTable starts a table written to io.out by flush. A piped one has its
// header written at once.
func newTable(io *streams, cols ...column) *table {
	t := &table{io: io, cols: cols}
	if !io.outTTY {
		t.plain = bufio.NewWriterSize(io.out, 64<<10)
		for i, c := range cols {
			if i > 0 {
				t.plain.WriteByte('\t')
			}
			t.plain.WriteString(c.title)
		}
		t.plain.WriteByte('\n')
	}
	return t
}

type column struct {
	title string
	// flex takes what width is left; at most one column has it.
	flex bool
	// drop orders optional columns: the lowest gives way first; 0 never.
	drop int
}

type cell struct {
	text string // shown on a terminal
	raw  string // piped; text if empty
	sgr  string // colour on a terminal
}

func (t *table) add(cells ...cell) {
	if t.plain != nil {
		writePlainRow(t.plain, cells)
		return
	}
	t.rows = append(t.rows, cells)
}

// minFlex is the least width the flexible column keeps before optional
// columns are dropped.
const minFlex = 16

// flush writes what is left of the table and reports the first error
// writing it met.
func (t *table) flush() error {
	if t.plain != nil {
		return t.plain.Flush()
	}
	bw := bufio.NewWriterSize(t.io.out, 64<<10)
	t.writeFitted(bw)
	return bw.Flush()
}

// cellSeparators keeps a piped cell on its line and in its column.
var cellSeparators = strings.NewReplacer("\t", " ", "\n", " ")

func writePlainRow(w *bufio.Writer, r []cell) {
	for i, c := range r {
		if i > 0 {
			w.WriteByte('\t')
		}
		v := c.raw
		if v == "" {
			v = c.text
		}
		if strings.IndexByte(v, '\t') >= 0 || strings.IndexByte(v, '\n') >= 0 {
			v = cellSeparators.Replace(v)
		}
		w.WriteString(v)
	}
	w.WriteByte('\n')
}

func (t *table) writeFitted(w *bufio.Writer) {
	widths := make([]int, len(t.cols))
	for i, c := range t.cols {
		widths[i] = runewidth.StringWidth(c.title)
	}
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], runewidth.StringWidth(c.text))
		}
	}
	shown := make([]bool, len(t.cols))
	for i := range shown {
		shown[i] = true
	}
	flex := -1
	for i, c := range t.cols {
		if c.flex {
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
	for total() > t.io.width {
		victim := -1
		for i, c := range t.cols {
			if shown[i] && c.drop > 0 && (victim < 0 || c.drop < t.cols[victim].drop) {
				victim = i
			}
		}
		if victim < 0 {
			break
		}
		shown[victim] = false
	}
	if flex >= 0 {
		widths[flex] = max(1, min(natural, widths[flex]+t.io.width-total()))
	}
	line := func(cells []cell, header bool) {
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
			text := runewidth.Truncate(c.text, widths[i], "…")
			pad := widths[i] - runewidth.StringWidth(text)
			if i == last {
				pad = 0
			}
			sgr := c.sgr
			if header {
				sgr = sgrBold
			}
			b.WriteString(t.io.paint(sgr, text))
			b.WriteString(strings.Repeat(" ", pad))
		}
		w.WriteString(b.String() + "\n")
	}
	head := make([]cell, len(t.cols))
	for i, c := range t.cols {
		head[i] = cell{text: c.title}
	}
	line(head, true)
	for _, r := range t.rows {
		line(r, false)
	}
}
