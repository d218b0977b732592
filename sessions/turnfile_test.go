package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/watch"
)

// A turn file removed while its turn runs: the supervisor records the rest
// of the output in a new file at the same path and notes it in the turn.
func TestTurnFileRemovedWhileTheTurnRuns(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	goOn := filepath.Join(dir, "go-on")
	w.SetScript(fakeagent.Script{Default: append([]map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`),
		fakeagent.Out(`{"type":"turn.started"}`),
		{"wait_file": goOn},
	}, fakeagent.Completes("after the removal", 700)[2:]...)})
	s := w.spawn("write on")
	path := w.Store.TurnPath(s.ID, 1)
	sessionstest.Eventually(t, "the first lines", func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), "turn.started")
	})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(goOn, nil, 0o600)
	got := w.wait(s.ID)
	if got.Status() != record.StatusCompleted || got.LastMessage != "after the removal" {
		t.Fatalf("%s %q %q", got.Status(), got.LastMessage, got.Error)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "after the removal") || !strings.Contains(string(b), "turn.completed") {
		t.Fatalf("the rest of the turn is not in %s: %q (%v)", path, b, err)
	}
	if len(got.Turns) != 1 || len(got.Turns[0].Notes) != 1 || !strings.Contains(got.Turns[0].Notes[0], "removed") {
		t.Fatalf("the turn's notes: %q", got.Turns[0].Notes)
	}
	// The record's offset counts from the new file's start: a reader
	// resumes at its end, not past it.
	if got.Turns[0].Offset != int64(len(b)) {
		t.Fatalf("offset %d, want the new file's size %d", got.Turns[0].Offset, len(b))
	}
	shown, err := w.Manager.Get(context.Background(), s.ID)
	if err != nil || shown.LastMessage != "after the removal" {
		t.Fatalf("read back: %v %+v", err, shown)
	}
}

// A reader following a turn whose file was removed and made again reads
// on in the new file.
func TestTurnReaderFollowsAMadeAgainTurnFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turn_1.jsonl")
	msg := func(text string) string {
		return `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"` + text + `"}}` + "\n"
	}
	os.WriteFile(path, []byte(msg("before")), 0o600)
	rd := watch.NewTurnReader(path, &testParser{}, 0)
	var got []string
	read := func() {
		if err := rd.Read(false, func(ev record.Event) { got = append(got, ev.Text) }); err != nil {
			t.Fatal(err)
		}
	}
	read()
	os.Remove(path)
	os.WriteFile(path, []byte(msg("after")), 0o600)
	read()
	if strings.Join(got, ",") != "before,after" {
		t.Fatalf("read %q", got)
	}
	if rd.Offset() != int64(len(msg("after"))) {
		t.Fatalf("offset %d, want the new file's", rd.Offset())
	}
}

// A turn file replaced by a symlink while its turn runs: nothing is
// written through it, and the turn fails saying the symlink is what is in
// the way (not just "file exists").
func TestTurnFileReplacedByASymlinkWhileTheTurnRuns(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	goOn := filepath.Join(dir, "go-on")
	w.SetScript(fakeagent.Script{Default: append([]map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`),
		fakeagent.Out(`{"type":"turn.started"}`),
		{"wait_file": goOn},
	}, fakeagent.Completes("after the swap", 700)[2:]...)})
	s := w.spawn("write on")
	path := w.Store.TurnPath(s.ID, 1)
	sessionstest.Eventually(t, "the first lines", func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), "turn.started")
	})
	pt := newTarget(t)
	pt.plant(path)
	os.WriteFile(goOn, nil, 0o600)
	got := w.wait(s.ID)
	pt.untouched("the supervisor")
	if got.Status() != record.StatusFailed || !strings.Contains(got.Error, path+" is a symlink") {
		t.Fatalf("%s: %q, want the symlink %s named", got.Status(), got.Error, path)
	}
}

// A reader of a turn file gets a cut line's marker as the raw event of an
// oversized line, saying how long it was.
func TestTurnReaderReportsACutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turn_1.jsonl")
	body := `{"type":"noise"}` + "\n" + string(agent.TruncatedLine(524288000)) + `{"type":"turn.completed"}` + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []record.Event
	if err := watch.ReadTurnFile(path, &testParser{}, func(ev record.Event) { got = append(got, ev) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Type != record.EventRaw || !strings.Contains(got[0].Text, "skipped a line of 524288000 bytes") || got[1].Type != record.EventTurnCompleted {
		t.Fatalf("events %+v", got)
	}
}
