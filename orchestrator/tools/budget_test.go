package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/store"
)

// An answer that names workers or files stays within what a model's client
// takes: 100 finished workers with long messages come over several waits,
// each within its bound, the unread first, none lost; list_sessions names
// the newest and counts the rest; check_session names the first files of
// a change of 300 and counts them all.
func TestAnswersAboutManyWorkersStayBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	var changes []string
	for i := range 300 {
		changes = append(changes, fmt.Sprintf(`{"path":"pkg/file%03d.go","kind":"add"}`, i))
	}
	long := strings.Repeat("a long final report. ", 200) // 4 KB
	f.w.Script(map[string][]fakeagent.Step{
		"many files": append([]fakeagent.Step{fakeagent.Out(`{"type":"item.completed","item":{"id":"item_9","type":"file_change","changes":[` +
			strings.Join(changes, ",") + `],"status":"completed"}}`)}, fakeagent.Completes("done", 1)...),
		"long": fakeagent.Completes(long, 1),
	})
	files := f.delegate("many files")
	first := f.delegate("long")
	f.mustOK("wait", map[string]any{"session_ids": []string{files, first}, "mode": "all"}, nil)

	var check struct {
		Files []struct{ Path string } `json:"files_changed"`
		Total int                     `json:"files_changed_total"`
	}
	f.mustOK("check_session", map[string]any{"session_id": files}, &check)
	if len(check.Files) != filesShown || check.Total != 300 || check.Files[0].Path != "pkg/file000.go" {
		t.Errorf("check_session of a change of 300 files: %d named, total %d", len(check.Files), check.Total)
	}

	// 100 more finished workers, unread, as the first one is.
	st := f.w.Manager.Store()
	rec, err := st.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	if err := st.BumpGeneration(t.Context(), func() error {
		for range 100 {
			rec.ID = store.NewID()
			rec.Task = strings.Repeat("a task described at length ", 10)
			want[rec.ID] = true
			if err := os.MkdirAll(filepath.Join(st.SessionDir(rec.ID), "turns"), 0o700); err != nil {
				return err
			}
			if err := st.Save(rec); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	for round := 1; len(want) > 0; round++ {
		if round > 50 {
			t.Fatalf("50 waits, and %d finished workers never read", len(want))
		}
		res := f.mustOK("wait", map[string]any{}, nil)
		if len(res.Text) > waitAnswerBytes+2000 {
			t.Errorf("wait %d: %d bytes, over its bound of %d", round, len(res.Text), waitAnswerBytes)
		}
		var w struct {
			Finished []struct {
				SessionID   string `json:"session_id"`
				LastMessage string `json:"last_message"`
			}
			LeftOut int `json:"finished_left_out"`
		}
		if err := json.Unmarshal([]byte(res.Text), &w); err != nil || len(w.Finished) == 0 {
			t.Fatalf("wait %d: %v %.300s", round, err, res.Text)
		}
		for _, e := range w.Finished {
			if !want[e.SessionID] || !strings.HasPrefix(e.LastMessage, "a long final report") {
				t.Fatalf("wait %d answered %s, read already or not one of them (files %s, first %s): %.200q", round, e.SessionID, files, first, e.LastMessage)
			}
			delete(want, e.SessionID)
		}
		if w.LeftOut != len(want) {
			t.Errorf("wait %d says %d left out; %d are", round, w.LeftOut, len(want))
		}
	}

	var list struct {
		Workers []json.RawMessage
		LeftOut int    `json:"left_out"`
		Note    string `json:"note"`
	}
	res := f.mustOK("list_sessions", map[string]any{}, &list)
	if len(res.Text) > listAnswerBytes+2000 || list.LeftOut == 0 || len(list.Workers)+list.LeftOut != 102 || !strings.Contains(list.Note, "completed") {
		t.Errorf("list_sessions of 102 workers: %d bytes, %d named, %d left out, note %q", len(res.Text), len(list.Workers), list.LeftOut, list.Note)
	}
}
