package tui

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// recorder is the real manager with its actions observed, and kill made to
// fail on demand.
type recorder struct {
	*sessions.Manager
	mu       sync.Mutex
	injected []string
	killed   []string
	reasons  []string
	killErr  error
	dropped  []record.InboxEntry // what a kill that succeeds dropped
}

func (r *recorder) Inject(_ context.Context, id, text string) (*sessions.InjectResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.injected = append(r.injected, id+":"+text)
	return &sessions.InjectResult{Entry: record.InboxEntry{Seq: len(r.injected) - 1, Text: text},
		Outcome: sessions.InjectQueued, Turn: 1, Session: &record.Session{ID: id}}, nil
}

func (r *recorder) Interrupt(_ context.Context, id, text string) (*sessions.InjectResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.injected = append(r.injected, "!"+id+":"+text)
	return &sessions.InjectResult{Entry: record.InboxEntry{Seq: len(r.injected) - 1, Text: text, Interrupt: true},
		Outcome: sessions.InjectInterrupted, Turn: 1, Session: &record.Session{ID: id}}, nil
}

func (r *recorder) KillReport(_ context.Context, id, reason string) (*sessions.Killed, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killed, r.reasons = append(r.killed, id), append(r.reasons, reason)
	if r.killErr != nil {
		return &sessions.Killed{}, r.killErr
	}
	return &sessions.Killed{Session: new(sessionstest.WithStatus(record.Session{ID: id}, record.StatusKilled)), Dropped: r.dropped}, nil
}

func (f *fixture) recorded(w, h int) (Model, *recorder) {
	rec := &recorder{Manager: f.m}
	return f.start(rec, w, h), rec
}

func selected(m Model) string {
	if s := m.list.Selected(); s != nil {
		return record.ShortID(s.ID)
	}
	return ""
}

func TestSelectionMovesAndTheDetailFollows(t *testing.T) {
	m := standard(t).newModel(120, 40)
	if selected(m) != "3f2a0004" || !strings.Contains(m.View(), "bump dependencies [follow]") {
		t.Fatalf("first row %s", selected(m))
	}
	m = press(t, m, "j")
	if selected(m) != "3f2a0005" || record.ShortID(m.detail.ID()) != "3f2a0005" {
		t.Fatalf("after j: %s, detail %s", selected(m), m.detail.ID())
	}
	if v := m.View(); !strings.Contains(v, "$ /bin/bash -lc 'go vet ./...'  (running)") {
		t.Fatalf("running command not shown:\n%s", v)
	}
	m = press(t, m, "j", "j", "k")
	if selected(m) != "3f2a0003" {
		t.Fatalf("after j j k: %s", selected(m))
	}
	m = press(t, m, "G")
	if selected(m) != "3f2a0001" {
		t.Fatalf("after G: %s", selected(m))
	}
}

func TestFilterSortAndHideFinished(t *testing.T) {
	m := standard(t).newModel(120, 40)
	m = press(t, m, "/", "d", "o", "c", "s", "enter")
	if v := m.View(); !strings.Contains(v, "rewrite the docs") || strings.Contains(v, "bump dependencies") || !strings.Contains(v, "filter: docs") {
		t.Fatalf("filter docs:\n%s", v)
	}
	m = press(t, m, "/", "esc")
	if m.list.Filter() != "docs" {
		t.Fatal("esc changed the filter")
	}
	m = press(t, m, "/", "backspace", "backspace", "backspace", "backspace", "enter")
	if m.list.Count() != 5 || !strings.Contains(m.View(), "bump dependencies") {
		t.Fatalf("clearing the filter:\n%s", m.View())
	}
	m = press(t, m, "a")
	if v := m.View(); !strings.Contains(v, "hiding finished") || strings.Contains(v, "rewrite the docs") || selected(m) != "3f2a0005" {
		t.Fatalf("hide finished:\n%s", v)
	}
	m = press(t, m, "a", "s")
	if !strings.Contains(m.View(), "sorted by status") || selected(m) != "3f2a0005" {
		t.Fatalf("sort by status keeps the selection: %s\n%s", selected(m), m.View())
	}
	m = press(t, m, "g")
	if selected(m) != "3f2a0002" { // failed first
		t.Fatalf("status order starts with %s", selected(m))
	}
}

// I steers: the running turn stops, and the follow-up continues the thread
// at once, as inject --interrupt does; the web page has it too.
func TestSteerThroughThePrompt(t *testing.T) {
	f := standard(t)
	m, rec := f.recorded(120, 40)
	m = press(t, m, "j", "I")
	if !strings.Contains(m.View(), "stop the turn of 3f2a0005 and send:") {
		t.Fatalf("no prompt:\n%s", m.View())
	}
	m = press(t, m, "u", "s", "e", " ", "v", "2", "enter")
	if len(rec.injected) != 1 || !strings.HasPrefix(rec.injected[0], "!3f2a0005") || !strings.HasSuffix(rec.injected[0], ":use v2") {
		t.Fatalf("sent %q", rec.injected)
	}
	if !strings.Contains(m.View(), "stopping turn 1 of 3f2a0005") {
		t.Fatalf("status:\n%s", m.View())
	}
}

func TestInjectThroughThePrompt(t *testing.T) {
	f := standard(t)
	m, rec := f.recorded(120, 40)
	m = press(t, m, "j", "i")
	if !strings.Contains(m.View(), "follow-up to 3f2a0005:") {
		t.Fatalf("no prompt:\n%s", m.View())
	}
	m = press(t, m, "a", "l", "s", "o", " ", "d", "o", "c", "s", "enter")
	if len(rec.injected) != 1 || !strings.HasSuffix(rec.injected[0], ":also docs") || !strings.HasPrefix(rec.injected[0], "3f2a0005") {
		t.Fatalf("injected %q", rec.injected)
	}
	if !strings.Contains(m.View(), "follow-up queued for 3f2a0005") {
		t.Fatalf("status:\n%s", m.View())
	}
	// Once the follow-up's turn starts, the status line no longer says
	// it is queued.
	f.nextTurn(rec.injected[0][:strings.Index(rec.injected[0], ":")])
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.View(), "3f2a0005 started the follow-up as turn 2") })
	if strings.Contains(m.View(), "follow-up queued") {
		t.Fatalf("still queued:\n%s", m.View())
	}
	m = press(t, m, "i", "x", "esc")
	if len(rec.injected) != 1 || m.prompt.Active() {
		t.Fatal("esc sent the follow-up or left the prompt open")
	}
}

func TestKillAndDeleteConfirmAndReportErrors(t *testing.T) {
	f := standard(t)
	m, rec := f.recorded(120, 40)
	// x on a finished session: refused in the status line.
	m = press(t, m, "x")
	if !strings.Contains(m.View(), "is not running (completed)") || len(rec.killed) != 0 {
		t.Fatalf("kill of a finished session:\n%s", m.View())
	}
	m = press(t, m, "j", "x")
	if !strings.Contains(m.View(), "kill 3f2a0005 and every process it started? [y/N]") {
		t.Fatalf("no confirmation:\n%s", m.View())
	}
	m = press(t, m, "n")
	if len(rec.killed) != 0 || !strings.Contains(m.View(), "cancelled") {
		t.Fatal("n killed")
	}
	rec.killErr = errors.New("kill 3f2a0005: processes still alive: 4242")
	m = press(t, m, "x", "y")
	if len(rec.killed) != 1 || !strings.Contains(m.View(), "processes still alive: 4242") {
		t.Fatalf("kill error not shown:\n%s", m.View())
	}
	// The session says where its kill came from (it read "killed by
	// zwarm kill", a command no one ran).
	if rec.reasons[0] != "killed from the dashboard (zwarm dash)" {
		t.Fatalf("killed because %q", rec.reasons[0])
	}
	// A kill that dropped queued follow-ups says how many.
	rec.killErr, rec.dropped = nil, make([]record.InboxEntry, 2)
	m = press(t, m, "x", "y")
	if !strings.Contains(m.View(), "3f2a0005 killed · 2 queued follow-ups dropped, undelivered") {
		t.Fatalf("kill with follow-ups dropped:\n%s", m.View())
	}
	// d on a running session: refused; on a finished one: deleted for real.
	m = press(t, m, "d")
	if !strings.Contains(m.View(), "only finished sessions can be deleted") {
		t.Fatalf("delete running:\n%s", m.View())
	}
	m = press(t, m, "k", "d", "y")
	if !strings.Contains(m.View(), "deleted 3f2a0004") {
		t.Fatalf("delete:\n%s", m.View())
	}
	if _, err := os.Stat(filepath.Join(f.dir, "sessions", "3f2a0004-0000-4000-8000-000000000004")); !os.IsNotExist(err) {
		t.Fatalf("session dir still there: %v", err)
	}
	// It was one of the listing's: its row and its count go.
	m = settle(t, m, func(m Model) bool {
		return !strings.Contains(m.list.View(), "3f2a0004") && strings.Contains(m.View(), "✓ 1 completed")
	})
	if m.list.Count() != 4 {
		t.Fatalf("%d sessions after the delete", m.list.Count())
	}
}

func TestAppendedStepAppearsOnChange(t *testing.T) {
	f := standard(t)
	m := press(t, f.newModel(120, 40), "j") // the running session
	id := m.detail.ID()
	f.appendTurn(id, 1, `{"type":"item.completed","item":{"id":"item_4","type":"command_execution","command":"/bin/bash -lc 'go vet ./...'","aggregated_output":"","exit_code":0,"status":"completed"}}`)
	f.appendTurn(id, 1, `{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"vet is clean"}}`)
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.View(), "» vet is clean") })
	v := m.View()
	if !strings.Contains(v, "go vet ./...'  (exit 0)") || strings.Contains(v, "(running)") {
		t.Fatalf("appended steps not shown:\n%s", v)
	}
}

func TestScrollingLeavesAndReturnsToFollow(t *testing.T) {
	f := newFixture(t)
	id := f.add(1, record.StatusRunning, "long", time.Minute)
	for i := range 100 {
		f.appendTurn(id, 1, `{"type":"item.completed","item":{"id":"m`+string(rune('a'+i%26))+string(rune('a'+i/26))+`","type":"agent_message","text":"line"}}`)
	}
	m := f.newModel(80, 24)
	m = press(t, m, "tab", "k", "k")
	if m.detail.Following() {
		t.Fatal("scrolling up kept follow mode")
	}
	m = press(t, m, "G")
	if !m.detail.Following() || !strings.Contains(m.View(), "[follow]") {
		t.Fatal("G did not return to follow mode")
	}
}

func TestResizeKeepsTheScreenInBounds(t *testing.T) {
	m := standard(t).newModel(120, 40)
	for _, size := range [][2]int{{80, 24}, {60, 15}, {200, 50}, {40, 10}} {
		m = send(m, sizeMsg(size[0], size[1]))
		v := m.View()
		lines := strings.Split(v, "\n")
		if len(lines) != size[1] {
			t.Errorf("%v: %d lines", size, len(lines))
		}
		for i, l := range lines {
			if w := lipgloss.Width(l); w > size[0] {
				t.Errorf("%v: line %d is %d wide: %q", size, i, w, l)
			}
		}
	}
}

// A supervisor that dies without a word is noticed through its pidfd, with
// no tick: the dashboard shows the session failed.
func TestDeadSupervisorIsNoticedWithoutATick(t *testing.T) {
	f := newFixture(t)
	sup := exec.Command("sleep", "60")
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	defer sup.Wait()
	ref, err := proc.RefOf(sup.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	ref.Role = "supervisor"
	f.add(1, record.StatusRunning, "orphaned", time.Minute, func(s *record.Session) { s.Owner = ref })
	m := f.newModel(80, 24)
	if v := m.View(); !strings.Contains(v, "running") {
		t.Fatalf("not running at first:\n%s", v)
	}
	sup.Process.Kill()
	settle(t, m, func(m Model) bool { return strings.Contains(m.View(), "✗ failed") })
}

// A list that shows few rows (a filter, finished ones hidden, none at all)
// leaves the rest of the screen to the story: the help line stays on the
// last row, and the story shows more than it does beside a long list. The
// footer rose, the rows below it blank.
func TestAShortListGivesItsRowsToTheStory(t *testing.T) {
	m := standard(t).newModel(80, 24)
	full := strings.Count(m.detail.View(), "\n") + 1
	m = press(t, m, "/", "d", "o", "c", "s", "enter")
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) != 24 || strings.TrimSpace(lines[23]) == "" || strings.TrimSpace(lines[22]) == "" {
		t.Fatalf("the footer is not on the last rows:\n%s", v)
	}
	if short := strings.Count(m.detail.View(), "\n") + 1; short <= full {
		t.Fatalf("the story has %d rows beside one session, %d beside them all", short, full)
	}
}

// A message longer than the screen is wide is wrapped, not cut: the end
// of it, which says what to do, was lost at 80 columns.
func TestALongMessageIsWrappedWhole(t *testing.T) {
	m := standard(t).newModel(80, 24)
	msg := "land 2049d791: /srv/project has uncommitted changes to hello.txt, which landing would overwrite; nothing was changed. Commit or stash them, then land again"
	m.setError(errors.New(msg))
	lines := strings.Split(m.View(), "\n")
	if len(lines) != 24 || !strings.Contains(lines[23], "q quit") {
		t.Fatalf("the help line is not the last:\n%s", strings.Join(lines, "\n"))
	}
	var status []string
	for _, l := range lines[20:23] {
		status = append(status, strings.TrimSpace(ansi.Strip(l)))
	}
	if got := strings.TrimPrefix(strings.Join(status, " "), "◐ "); got != msg { // (the spinner: a session runs)
		t.Fatalf("the message on the screen:\n%q\nwant\n%q", got, msg)
	}
}

// The dashboard says what became of a follow-up as inject does: one to a
// session a person works in waits for them to leave, not for "turn 1 to
// end", which had ended minutes before.
func TestAFollowUpToAnAttachedSessionSaysSo(t *testing.T) {
	s := &record.Session{ID: "8243bc6d-0000-4000-8000-000000000001", Turn: 1}
	r := &sessions.InjectResult{Session: s, Entry: record.InboxEntry{ID: "e1"}, Outcome: sessions.InjectQueued, Turn: 1, Attached: true}
	if got := injectText(r); !strings.Contains(got, "a person is attached to it") || strings.Contains(got, "when turn 1 ends") {
		t.Fatalf("%q", got)
	}
}
