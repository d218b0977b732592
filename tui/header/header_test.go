package header

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/tui/common"
)

// The state dir's path fits the room the counts leave: cut at its start,
// marked with "…", its end (what tells two dirs apart) kept; whole when it
// fits; left out when nothing of it would.
func TestTheStateDirFitsTheWidth(t *testing.T) {
	const dir = "/tmp/zwarm-demo-48244293/a/rather/long/path/to/the/.zwarm"
	m := New(common.New(), dir)
	m.SetTotals(common.Totals{Counts: map[record.Status]int{record.StatusRunning: 3, record.StatusCompleted: 12}, Tokens: 123456, Cost: 1.5})
	for _, tc := range []struct {
		width int
		want  string // the end of the line, as it reads
	}{
		{200, "  " + dir},
		{80, "  …/long/path/to/the/.zwarm"},
		{60, "  …warm"},
	} {
		m.SetSize(tc.width, 1)
		line := ansi.Strip(m.View())
		if w := ansi.StringWidth(line); w > tc.width || !strings.HasSuffix(line, tc.want) {
			t.Errorf("width %d: %q (%d cells); want it to end in %q", tc.width, line, w, tc.want)
		}
	}
	m.SetSize(40, 1)
	if line := ansi.Strip(m.View()); strings.Contains(line, "zwarm-demo") || strings.Contains(line, "…/") || ansi.StringWidth(line) > 40 {
		t.Errorf("width 40: %q", line)
	}
}
