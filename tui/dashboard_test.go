package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/tui/common"
	"github.com/zwarm/zwarm/tui/header"
)

// rewrite changes a session's record on disk as a supervisor would.
func (f *fixture) rewrite(id string, change func(*record.Session)) {
	path := filepath.Join(f.dir, "sessions", id, "meta.json")
	data, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	var s record.Session
	if err := json.Unmarshal(data, &s); err != nil {
		f.t.Fatal(err)
	}
	change(&s)
	s.UpdatedAt = time.Now().UTC()
	data, _ = json.Marshal(s)
	if err := os.WriteFile(path+".tmp", data, 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		f.t.Fatal(err)
	}
}

// order checks that the wanted lines appear in the detail pane in order.
func order(t *testing.T, view string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(view[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, view)
		}
		at += i + len(w)
	}
}

// A follow-up queued while turn 1 runs: turn 1's end line stays under turn
// 1, live and when the session is opened afterwards.
func TestTurnEndStaysUnderItsTurn(t *testing.T) {
	f := newFixture(t)
	id := f.add(1, record.StatusRunning, "first", time.Minute, func(s *record.Session) { s.PendingInjects = 1 })
	m := f.newModel(120, 60)
	end := clock.Add(-30 * time.Second)
	zero := 0
	f.writeTurn(id, 2, `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"second answer"}}`+"\n")
	f.rewrite(id, func(s *record.Session) {
		t1 := &s.Turns[0]
		sessionstest.SetStatus(t1, record.StatusCompleted)
		t1.EndedAt, t1.ExitCode = &end, &zero
		s.Turns = append(s.Turns, sessionstest.WithStatus(record.Turn{N: 2, Prompt: "the follow-up", StartedAt: end, Resumed: true, Live: true}, record.StatusRunning))
		s.Turn, s.PendingInjects = 2, 0
	})
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.detail.View(), "second answer") })
	order(t, m.detail.View(), "── turn 1 · task", "── completed · exit 0", "── turn 2 · follow-up", "> the follow-up", "» second answer")

	f.rewrite(id, func(s *record.Session) {
		t2 := &s.Turns[1]
		sessionstest.SetStatus(t2, record.StatusCompleted)
		t2.EndedAt, t2.ExitCode = &end, &zero
		sessionstest.SetStatus(s, record.StatusCompleted)
		s.Owner, s.EndedAt, s.ExitCode = nil, &end, &zero
	})
	m = settle(t, m, func(m Model) bool { return strings.Count(m.detail.View(), "── completed") == 2 })
	order(t, m.detail.View(), "── turn 1 · task", "── completed", "── turn 2 · follow-up", "» second answer", "── completed")

	reopened := f.newModel(120, 60)
	order(t, reopened.detail.View(), "── turn 1 · task", "── completed", "── turn 2 · follow-up", "» second answer", "── completed")
}

// A killed turn's last command reads killed, not running.
func TestKilledTurnShowsItsCommandKilled(t *testing.T) {
	f := newFixture(t)
	id := f.add(1, record.StatusRunning, "vet", time.Minute)
	m := f.newModel(120, 40)
	if !strings.Contains(m.detail.View(), "go vet ./...'  (running)") {
		t.Fatalf("not running at first:\n%s", m.detail.View())
	}
	end := clock
	code := 143
	f.rewrite(id, func(s *record.Session) {
		t1 := &s.Turns[0]
		sessionstest.SetStatus(t1, record.StatusKilled)
		t1.EndedAt, t1.ExitCode, t1.Error = &end, &code, "killed by zwarm kill"
		sessionstest.SetStatus(s, record.StatusKilled)
		s.Owner, s.EndedAt, s.ExitCode = nil, &end, &code
	})
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.detail.View(), "── killed") })
	if v := m.detail.View(); !strings.Contains(v, "go vet ./...'  (killed)") || strings.Contains(v, "(running)") {
		t.Fatalf("after the kill:\n%s", v)
	}
}

// Letters that arrive in one message (fast typing, tmux send-keys -l jj)
// are each a key.
func TestLettersInOneMessageAreEachAKey(t *testing.T) {
	m := standard(t).newModel(120, 40)
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jj")})
	m = drive(t, next.(Model), cmd)
	if selected(m) != "3f2a0003" {
		t.Fatalf("jj moved to %s", selected(m))
	}
	// In a text field they are text.
	m = press(t, m, "/")
	next, cmd = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("docs")})
	m = drive(t, next.(Model), cmd)
	m = press(t, m, "enter")
	if m.list.Filter() != "docs" {
		t.Fatalf("filter %q", m.list.Filter())
	}
}

// Without colour, the focused pane is still marked.
func TestFocusIsVisibleWithoutColour(t *testing.T) {
	m := standard(t).newModel(120, 40)
	lines := strings.Split(m.View(), "\n")
	if !strings.HasPrefix(lines[1], "▶ ID") || !strings.Contains(m.View(), "\n── 3f2a0004") {
		t.Fatalf("list focused:\n%s", m.View())
	}
	m = press(t, m, "tab")
	lines = strings.Split(m.View(), "\n")
	if strings.HasPrefix(lines[1], "▶") || !strings.Contains(m.View(), "\n▶ 3f2a0004") {
		t.Fatalf("detail focused:\n%s", m.View())
	}
	if !strings.Contains(m.View(), ">*3f2a0004") {
		t.Fatalf("the selected row lost its mark:\n%s", m.View())
	}
}

// Long trajectory lines wrap: an error keeps its install hint at 80x24.
func TestLongLinesWrap(t *testing.T) {
	f := newFixture(t)
	hint := "install it with `npm install -g @openai/codex`, or point ZWARM_CODEX_BIN at it"
	f.add(1, record.StatusFailed, "x", time.Minute)
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x3f2a0000+1, 1)
	f.writeTurn(id, 1, `{"type":"turn.failed","error":{"message":"codex binary \"codex\" (from PATH) not found: `+hint+`"}}`+"\n")
	m := f.newModel(80, 24)
	v := m.View()
	if !strings.Contains(v, "ZWARM_CODEX_BIN at it") {
		t.Fatalf("the end of the error is cut:\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Fatalf("a line is %d wide: %q", w, l)
		}
	}
}

// Columns size to their content: model names are whole, and adapter and
// model stay at 80 columns.
func TestModelNamesAreWhole(t *testing.T) {
	f := newFixture(t)
	f.add(1, record.StatusCompleted, "one", time.Hour, func(s *record.Session) { s.Model = "gpt-5.1-codex-mini" })
	f.add(2, record.StatusCompleted, "two", time.Minute)
	for _, w := range []int{80, 160} {
		v := f.newModel(w, 24).list.View()
		if !strings.Contains(v, "gpt-5.1-codex-mini") || !strings.Contains(v, "gpt-5.1-codex ") || !strings.Contains(v, "ADAPTER") {
			t.Errorf("%d columns:\n%s", w, v)
		}
	}
}

// An idle dashboard schedules nothing: the clock ticks only while a
// session runs.
func TestClockTicksOnlyWhileSomethingRuns(t *testing.T) {
	f := newFixture(t)
	f.add(1, record.StatusCompleted, "done", time.Hour)
	m := f.startTicking(time.Second)
	if m.ticking {
		t.Fatal("ticking with nothing running")
	}
	f = newFixture(t)
	f.add(1, record.StatusRunning, "busy", time.Minute)
	if m := f.startTicking(time.Second); !m.ticking {
		t.Fatal("not ticking while a session runs")
	}
}

func (f *fixture) ctx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(cancel)
	return ctx
}

func (f *fixture) startTicking(tick time.Duration) Model {
	m := New(f.ctx(), Options{Sessions: f.m, Runs: RunsOf(f.dir), StateDir: "/state", Now: func() time.Time { return clock }, Tick: tick})
	m = send(m, sizeMsg(100, 30))
	newHarness()
	start(m.Init())
	return settle(f.t, m, func(m Model) bool { return m.loaded })
}

// The screen writes only what changed, and nothing for a frame it has.
func TestScreenDrawsOnlyChanges(t *testing.T) {
	var out bytes.Buffer
	s := &screen{out: &out}
	s.show("a\nb\nc")
	s.draw()
	first := out.String()
	out.Reset()
	s.show("a\nb\nc")
	if s.armed {
		t.Fatal("the same frame scheduled a draw")
	}
	s.show("a\nB\nc")
	s.draw()
	if got := out.String(); got != "\x1b[2;1HB\x1b[K" || !strings.Contains(first, "\x1b[3;1Hc") {
		t.Fatalf("draws %q after %q", got, first)
	}
	s.close()
}

// A worker whose model went silent shows for how long.
func TestQuietWorkerShows(t *testing.T) {
	f := newFixture(t)
	f.add(1, record.StatusRunning, "stalled", time.Hour, func(s *record.Session) {
		last := clock.Add(-5 * time.Minute)
		s.LastEventAt = &last
	})
	if v := f.newModel(120, 30).View(); !strings.Contains(v, "● running · quiet 5m") {
		t.Fatalf("no quiet mark:\n%s", v)
	}
}

// Agent and task text never reaches the terminal raw.
func TestHostileTextIsShownEscaped(t *testing.T) {
	f := newFixture(t)
	bad := "x\x1b[2J\x1b]0;pwned\x07y\rz\u009b1m\u202e"
	msg, _ := json.Marshal(bad)
	id := f.add(1, record.StatusCompleted, "task "+bad, time.Minute)
	f.writeTurn(id, 1, `{"type":"item.completed","item":{"id":"item_5","type":"agent_message","text":`+string(msg)+`}}`+"\n")
	v := f.newModel(120, 30).View()
	for _, r := range v {
		if r != '\n' && unicode.IsControl(r) || r == '\u202e' {
			t.Fatalf("the view carries %U:\n%q", r, v)
		}
	}
	if !strings.Contains(v, `» x\x1b[2J`) || !strings.Contains(v, `task x\x1b[2J`) {
		t.Fatalf("the text is not shown escaped:\n%s", v)
	}
}

// Totals under a cent keep their digits.
func TestHeaderCostBelowACent(t *testing.T) {
	var list []*record.Session
	for range 11 {
		c := 0.0003
		list = append(list, new(sessionstest.WithStatus(record.Session{CostUSD: &c, Usage: record.Usage{TotalTokens: 10}}, record.StatusCompleted)))
	}
	h := header.New(common.New(), "/s")
	h.SetSize(120, 1)
	h.SetSessions(list)
	if v := h.View(); !strings.Contains(v, "110 tokens $0.0033") {
		t.Fatalf("header %q", v)
	}
}

// A model without a price costs "?" in its row, the header's total is a
// part ("+?"), and the status line, when it has nothing else to say,
// names the model and how to price it.
func TestUnpricedModelIsNamedOnce(t *testing.T) {
	f := newFixture(t)
	unpriced := func(s *record.Session) {
		s.Model, s.CostUSD, s.Turns[0].CostUSD = "mystery-model", nil, nil
	}
	f.add(1, record.StatusCompleted, "priced", time.Hour)
	f.add(2, record.StatusCompleted, "unpriced", time.Hour, unpriced)
	f.add(3, record.StatusFailed, "unpriced too", time.Hour, unpriced)
	v := f.newModel(160, 24).View()
	note := `? no price known for model mystery-model: add [prices."mystery-model"]`
	if strings.Count(v, note) != 1 || !strings.Contains(v, "$0.0045+?") {
		t.Errorf("want the header's total as a part and the note %q once:\n%s", note, v)
	}
	var row string
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "unpriced too") {
			row = l
		}
	}
	if !strings.Contains(row, " ? ") {
		t.Errorf("the unpriced row has no ? cost: %q", row)
	}
}
