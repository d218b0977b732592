package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A spawn killed before its session was renamed into place leaves
// ".new-<id>", an rm killed while it deleted leaves ".removing-<id>":
// doctor names them, clean removes them (a spawn still making its
// directory aside), and the sessions are left alone.
func TestCleanRemovesWhatKilledSpawnsAndRemovalsLeft(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.setScript(fakeagent.Completes("done", 700))
	id := w.spawn("real work")
	w.ok("wait", id)
	sdir := filepath.Join(w.State, "sessions")
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{".new-0a1b2c3d-0000-4000-8000-000000000001", ".removing-0a1b2c3d-0000-4000-8000-000000000002", ".new-0a1b2c3d-0000-4000-8000-000000000003"} {
		p := filepath.Join(sdir, name, "turns")
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(sdir, name, ".reserve"), make([]byte, 1<<10), 0o600)
		if !strings.HasSuffix(name, "3") {
			os.Chtimes(filepath.Join(sdir, name), old, old)
		}
	}
	if r := w.zwarm("doctor"); !strings.Contains(r.stdout, "2 directories in "+sdir+" left by a spawn or an rm killed midway") {
		t.Fatalf("doctor: %+v", r)
	}
	out := w.ok("clean", "--dry-run")
	if !strings.Contains(out, "would remove "+filepath.Join(sdir, ".new-0a1b2c3d-0000-4000-8000-000000000001")) ||
		!strings.Contains(out, ".removing-0a1b2c3d-0000-4000-8000-000000000002") || strings.Contains(out, "000000000003") {
		t.Fatalf("clean --dry-run printed %q", out)
	}
	r := w.zwarm("clean", "--yes")
	if r.code != 0 || !strings.Contains(r.stderr, "removed 2 directories left by a spawn or an rm killed midway") {
		t.Fatalf("clean: %+v", r)
	}
	ents, _ := os.ReadDir(sdir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != ".new-0a1b2c3d-0000-4000-8000-000000000003 "+id {
		t.Fatalf("left in the sessions dir: %v", left)
	}
	if s := w.show(id); s.LastMessage != "done" {
		t.Fatalf("the session after clean: %+v", s)
	}
}

// A session record that cannot be read is a problem doctor names, as ls
// does: such a session is in no list, and doctor said all was well.
func TestDoctorNamesARecordThatCannotBeRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.spawn("real work")
	w.ok("wait", id)
	if r := w.zwarm("doctor"); strings.Contains(r.stdout, "records") {
		t.Fatalf("doctor of readable records: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(w.State, "sessions", id, "meta.json"), []byte(`{"id":"x","status": 5`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := w.zwarm("doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "records") || !strings.Contains(r.stdout, "not valid JSON") || !strings.Contains(r.stdout, "zwarm rm --force "+id[:8]) {
		t.Fatalf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
