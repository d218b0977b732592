package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// A turn whose output file is gone, though the record says its agent
// spoke (its last message), says so: it read as a turn in which nothing
// happened.
func TestATurnWhoseOutputIsGoneSaysSo(t *testing.T) {
	dir := t.TempDir()
	id := "3f2a0000-0000-4000-8000-000000000021"
	writeSession(t, dir, id, `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"slept 1"}}`+"\n")
	st, err := state.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	s.Turns[0].LastMessage = "slept 1"
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
	m := manager(t, dir)
	_, turns, err := m.Transcript(context.Background(), id)
	if err != nil || len(turns) != 1 || len(turns[0].Events) == 0 {
		t.Fatalf("the turn as it is: %+v %v", turns, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "sessions", id, "turns")); err != nil {
		t.Fatal(err)
	}
	_, turns, err = m.Transcript(context.Background(), id)
	if err != nil || len(turns) != 1 || len(turns[0].Events) != 1 || turns[0].Events[0].Type != record.EventError ||
		!strings.Contains(turns[0].Events[0].Text, "is gone: what the agent printed in it is lost (its last message was \"slept 1\")") {
		t.Fatalf("the turn with its output gone: %+v %v", turns, err)
	}
}
