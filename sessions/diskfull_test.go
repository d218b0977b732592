package sessions

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// smallDisk mounts a tmpfs of the given size for the test's state dir.
// Mounting needs root; zwarm's CI runs as root.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// A full disk: the turn that cannot be recorded fails and says "no space
// left on device" where the user looks, the record is settled (never
// "running" forever), nothing keeps running, and a spawn on the full disk
// is refused with the same words and leaves no half-made session.
func TestFullDisk(t *testing.T) {
	w := newWorld(t)
	disk := smallDisk(t, "2m")
	st, err := NewStore(filepath.Join(disk, "state"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(st.Dir(), 0o700)
	for _, f := range []string{"script.json", ConfigFile} {
		data, _ := os.ReadFile(filepath.Join(w.st.Dir(), f))
		os.WriteFile(filepath.Join(st.Dir(), f), data, 0o600)
	}
	w.st = st
	w.m = NewManager(ManagerOptions{Store: st, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})
	w.script(fakeScript{Default: append([]map[string]any{out(`{"type":"thread.started","thread_id":"t"}`), {"out_bytes": 4 << 20}},
		completes("never seen", 1)...)})

	s := w.spawn("fill the disk")
	got := w.wait(s.ID)
	if got.Status != StatusFailed || !strings.Contains(got.Error, "no space left on device") {
		log, _ := os.ReadFile(st.logPath(s.ID))
		t.Fatalf("%s: %q\nsupervisor log:\n%s", got.Status, got.Error, log)
	}
	onDisk, err := st.load(s.ID)
	if err != nil || !onDisk.Settled() || onDisk.Status != StatusFailed {
		t.Fatalf("meta.json on disk: %v %v", onDisk, err)
	}
	if left := w.m.containment(s.ID).procs(); len(left) > 0 {
		t.Fatalf("left running: %v", left)
	}

	_, err = w.m.Spawn(context.Background(), SpawnRequest{Task: "another", Adapter: "fake", WorkingDir: w.work})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("spawn on a full disk: %v", err)
	}
	ents, _ := os.ReadDir(st.sessionsDir())
	for _, e := range ents {
		if e.Name() != s.ID && !strings.HasPrefix(e.Name(), ".probe") {
			t.Fatalf("a failed spawn left %s behind", e.Name())
		}
	}
	if list, err := w.m.List(context.Background(), ListOptions{}); err != nil || len(list) != 1 {
		t.Fatalf("list: %d sessions, %v", len(list), err)
	}
}

// The disk fills up while a turn runs (the agent's own work fills it), and
// then the agent says its last words: the turn fails as "disk full", yet
// its final message and usage, which reached the supervisor but not the
// turn file, are in the record, and what the turn file holds stays.
func TestFullDiskKeepsTheTurnsLastWords(t *testing.T) {
	w := newWorld(t)
	disk := smallDisk(t, "2m")
	st, err := NewStore(filepath.Join(disk, "state"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(st.Dir(), 0o700)
	w.st = st
	w.m = NewManager(ManagerOptions{Store: st, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})
	// The supervisor stops the agent once it cannot record it: this one
	// holds out for the grace period, long enough to say its last words.
	w.config("kill_grace = \"10s\"\n")
	last := completes("the last words", 1234)
	w.script(fakeScript{Before: []map[string]any{{"ignore_sigterm": true}}, Default: []map[string]any{
		out(`{"type":"thread.started","thread_id":"t"}`),
		{"run": "cat /dev/zero > " + filepath.Join(disk, "filler") + " 2>/dev/null; true"},
		// One write, so the agent has said all of it before it is stopped.
		out(last[2]["out"].(string) + "\n" + last[3]["out"].(string)),
		{"sleep_ms": 2000},
	}})

	s := w.spawn("fill the disk, then finish")
	got := w.wait(s.ID)
	if got.Status != StatusFailed || !strings.Contains(got.Error, "disk full") {
		t.Fatalf("%s: %q", got.Status, got.Error)
	}
	onDisk, err := st.load(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if onDisk.LastMessage != "the last words" || onDisk.Usage.InputTokens != 1234 || len(onDisk.Turns) != 1 ||
		onDisk.Turns[0].Usage.InputTokens != 1234 || !strings.Contains(onDisk.Turns[0].Error+onDisk.Error, "disk full") {
		t.Fatalf("the record lost the turn's end: last message %q, usage %+v, error %q", onDisk.LastMessage, onDisk.Usage, onDisk.Error)
	}
	turn, err := os.ReadFile(st.TurnPath(s.ID, 1))
	if err != nil || !strings.HasPrefix(string(turn), `{"type":"thread.started","thread_id":"t"}`+"\n") {
		t.Fatalf("the turn file lost what was written: %q %v", turn, err)
	}
}
