package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// Broken records are reported by id and reason, naming the file, and the
// rest of the listing is still there.
func TestBrokenRecordsAreReportedNotHidden(t *testing.T) {
	w := newWorld(t)
	good := w.spawn("fine")
	w.wait(good.ID)
	broken := map[string]string{
		"3f2a0000-0000-4000-8000-00000000000a": "\x00\x01 binary junk",
		"3f2a0000-0000-4000-8000-00000000000b": `{"version": 1, "id": "3f2a0000-0000-4000-8000-00000000000b", "task": "cut sho`,
		"3f2a0000-0000-4000-8000-00000000000c": `{"version": 7, "id": "3f2a0000-0000-4000-8000-00000000000c"}`,
	}
	for id, body := range broken {
		os.MkdirAll(w.Store.SessionDir(id), 0o700)
		os.WriteFile(w.Store.MetaPath(id), []byte(body), 0o600)
	}
	list, err := w.Manager.List(context.Background(), listing.Options{})
	var le *listing.Error
	if !errors.As(err, &le) || len(le.Records) != 3 || len(list) != 1 || list[0].ID != good.ID {
		t.Fatalf("list: %d sessions, %v", len(list), err)
	}
	for _, r := range le.Records {
		msg := r.Error()
		if !strings.Contains(msg, record.ShortID(r.ID)) || !strings.Contains(msg, "meta.json") {
			t.Errorf("%q does not name the session and its file", msg)
		}
		want := map[string]string{"a": "not valid JSON", "b": "not valid JSON", "c": "upgrade zwarm"}[r.ID[len(r.ID)-1:]]
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if _, err := w.Manager.Get(context.Background(), "3f2a0000-0000-4000-8000-00000000000c"); err == nil || !strings.Contains(err.Error(), "upgrade zwarm") {
		t.Fatalf("get of a newer record: %v", err)
	}
}

// A state dir that cannot be written is refused before anything starts,
// saying which and what to do.
func TestUnusableStateDir(t *testing.T) {
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	st, _ := state.NewStore(filepath.Join(file, "state"))
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})
	_, err := m.Spawn(context.Background(), sessions.SpawnRequest{Task: "x", Adapter: "fake", WorkingDir: w.Work})
	if err == nil || !strings.Contains(err.Error(), "state dir") || !strings.Contains(err.Error(), "--state-dir") {
		t.Fatalf("spawn into an unusable state dir: %v", err)
	}
	if _, err := m.List(context.Background(), listing.Options{}); err == nil || !strings.Contains(err.Error(), filepath.Join(file, "state")) {
		t.Fatalf("listing an unusable state dir: %v", err)
	}
}

// A turn file with a line near MaxLineBytes, one over it (a file written
// before the supervisor cut such lines) and binary junk: the long line is
// kept whole, the longer one and the junk become raw events, and nothing
// around them is lost.
func TestHugeLinesAndJunkInATurnFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.spawn("fine")
	w.wait(s.ID)
	big := strings.Repeat("y", agent.MaxLineBytes-200)
	f, err := os.OpenFile(w.Store.TurnPath(s.ID, 1), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\x00\xff\xfe binary junk \x1b[2J\n")
	f.WriteString(`{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"` + big + `"}}` + "\n")
	f.WriteString(`{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"` + big + big + `"}}` + "\n")
	f.WriteString(`{"type":"item.completed","item":{"id":"item_10","type":"agent_message","text":"after"}}` + "\n")
	f.Close()
	_, turns, err := w.Manager.Transcript(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var raw, msgs []string
	for _, ev := range turns[0].Events {
		switch ev.Type {
		case record.EventRaw:
			raw = append(raw, ev.Text)
		case record.EventMessage:
			msgs = append(msgs, ev.Text)
		}
	}
	if len(raw) != 2 || !strings.Contains(raw[1], "skipped a line of") || len(msgs) != 3 || msgs[0] != "done" || len(msgs[1]) != len(big) || msgs[2] != "after" {
		t.Fatalf("raw %d, messages %d (%d bytes in the long one)", len(raw), len(msgs), len(msgs[1]))
	}
}
