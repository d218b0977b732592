package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/state"
)

// printLines writes rendered lines, indented. Their text is safe already.
func printLines(w io.Writer, lines []render.Line) {
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l.String())
		bw.WriteByte('\n')
	}
	bw.Flush()
}

// printOutcome says how a session's last turn ended, for wait and --wait:
// its status, usage and cost, the error if any, and its last message.
func printOutcome(io *cli.Streams, s *record.Session) {
	var b strings.Builder
	status, sgr := string(s.Status()), statusColor(s.Status())
	fmt.Fprintf(&b, "%s %s · %s · %s tokens · %s\n", record.ShortID(s.ID), io.Paint(sgr, status),
		render.Plural(s.Turn, "turn"), render.SessionTokens(s), render.SessionCost(s))
	if s.Error != "" {
		for i, l := range render.Lines(render.ErrorText(s.Error)) {
			if i == 0 {
				l = "error: " + l
			}
			b.WriteString("  " + l + "\n")
		}
	}
	if s.LastMessage != "" {
		for _, l := range render.Lines(s.LastMessage) {
			b.WriteString("  » " + l + "\n")
		}
	}
	io.Out.Write([]byte(b.String()))
}

// stderrTail is the end of what a turn's agent wrote to stderr, for the
// reason of a turn that failed; "" when there is none.
func stderrTail(st *state.Store, id string, t record.Turn) string {
	if t.EndedAt == nil || t.Status() == record.StatusCompleted {
		return ""
	}
	f, err := os.Open(st.StderrPath(id, t.N))
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4 << 10
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, fi.Size()-tail)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && len(buf) == 0 {
		return ""
	}
	s := string(buf)
	if off > 0 {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:] // start at a whole line
		}
	}
	return s
}

// timeNow is the clock of the human-readable output.
var timeNow = time.Now
