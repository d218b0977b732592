package render

import "strings"

// DiffPainter colours git's diff output for a terminal, a line at a time
// and after the line was made safe (Safe), as git's --color would: file
// headers bold, hunk headers cyan, added lines green, removed ones red,
// and the graph of --stat green and red. git's own colours cannot be told
// from colour codes in the files a worker wrote, which would pass with
// them (a line made invisible, in a diff under review), so git colours
// nothing and the colours are put back here, by the diff's grammar.
type DiffPainter struct {
	header bool // between a "diff --git" line and its first hunk
}

const (
	sgrBold  = "\x1b[1m"
	sgrGreen = "\x1b[32m"
	sgrRed   = "\x1b[31m"
	sgrCyan  = "\x1b[36m"
	sgrReset = "\x1b[m"
)

// Paint is line, safe already, with its colours.
func (p *DiffPainter) Paint(line string) string {
	switch {
	case strings.HasPrefix(line, "diff --git "):
		p.header = true
		return sgrBold + line + sgrReset
	case strings.HasPrefix(line, "@@"):
		p.header = false
		// The hunk's range is coloured; the function after it is not.
		if end := strings.Index(line[2:], "@@"); end >= 0 {
			return sgrCyan + line[:end+4] + sgrReset + line[end+4:]
		}
		return sgrCyan + line + sgrReset
	case p.header:
		return sgrBold + line + sgrReset
	case strings.HasPrefix(line, "+"):
		return sgrGreen + line + sgrReset
	case strings.HasPrefix(line, "-"):
		return sgrRed + line + sgrReset
	}
	return paintStat(line)
}

// paintStat colours the graph that ends a --stat line
// (" a.go | 12 +++++++---"), and leaves any other line as it is.
func paintStat(line string) string {
	bar := strings.LastIndex(line, " | ")
	if bar < 0 {
		return line
	}
	sp := strings.LastIndexByte(line, ' ')
	graph := line[sp+1:]
	if sp < bar+3 || graph == "" || strings.Trim(graph, "+-") != "" {
		return line
	}
	plus := len(graph) - len(strings.TrimLeft(graph, "+"))
	var b strings.Builder
	b.WriteString(line[:sp+1])
	if plus > 0 {
		b.WriteString(sgrGreen + graph[:plus] + sgrReset)
	}
	if plus < len(graph) {
		b.WriteString(sgrRed + graph[plus:] + sgrReset)
	}
	return b.String()
}
