package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// Fifty zwarm commands at once on one state dir: spawns, follow-ups to one
// running session, listings, shows and kills. Every record still parses,
// every follow-up ends delivered or undelivered with a reason, and no
// temporary file or half-made session is left behind.
func TestFiftyConcurrentCommands(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(fakeagent.Completes("ok", 100),
		"target", append([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"wait_file": gate}}, fakeagent.Completes("target", 700)...),
		"victim", append([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"wait_file": filepath.Join(t.TempDir(), "never")}}, fakeagent.Completes("never", 1)...))
	target := w.spawn("target")
	var victims []string
	for range 10 {
		victims = append(victims, w.spawn("victim"))
	}
	sessionstest.Eventually(t, "the target to run", func() bool { return w.show(target).Status() == record.StatusRunning })

	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	run := func(args ...string) {
		defer wg.Done()
		r := w.bin(args...) // fifty processes, the listings too
		if r.code != 0 {
			mu.Lock()
			failures = append(failures, strings.Join(args, " ")+": "+r.stderr)
			mu.Unlock()
		}
	}
	for i := range 10 {
		wg.Add(5)
		go run("spawn", "--", "parallel task")
		go run("inject", target, "follow-up "+string(rune('a'+i)))
		go run("ls")
		go run("show", target)
		go run("kill", victims[i])
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of 50 commands failed:\n%s", len(failures), strings.Join(failures, "\n"))
	}
	touch(t, gate)
	ids := w.IDs()
	if r := w.zwarm(append([]string{"wait", "--timeout", "120s"}, ids...)...); r.code != 1 { // the killed ones
		t.Fatalf("wait: exit %d: %s", r.code, r.stderr)
	}

	list := w.ls()
	if len(list) != 21 {
		t.Fatalf("%d sessions listed, want 21", len(list))
	}
	for _, s := range list {
		want := record.StatusCompleted
		for _, v := range victims {
			if s.ID == v {
				want = record.StatusKilled
			}
		}
		if s.Status() != want {
			t.Errorf("%s: %s, want %s (%s)", s.ID[:8], s.Status(), want, s.Error)
		}
	}
	shown := w.show(target)
	if len(shown.Inbox) != 10 {
		t.Fatalf("%d follow-ups recorded, want 10", len(shown.Inbox))
	}
	for _, e := range shown.Inbox {
		if e.State == record.InboxQueued || e.State == record.InboxUndelivered && e.Reason == "" {
			t.Errorf("follow-up %q ended %s %q", e.Text, e.State, e.Reason)
		}
	}
	if len(shown.Turns) != 11 || shown.Status() != record.StatusCompleted {
		t.Errorf("target: %d turns, %s", len(shown.Turns), shown.Status())
	}
	filepath.WalkDir(w.State, func(path string, d fs.DirEntry, err error) error {
		name := d.Name()
		if strings.Contains(name, ".tmp") || strings.HasPrefix(name, ".new-") || strings.HasPrefix(name, ".removing-") || strings.HasPrefix(name, ".probe") {
			t.Errorf("left behind: %s", path)
		}
		return nil
	})
}
