package sessions_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
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

// A full disk: the turn whose output no longer fits fails and says "disk
// full" and "no space left on device" where the user looks, yet the agent
// is not stopped: it says its last words (on stderr too, which a stopped
// copy of it would die of), and its final message and usage reach the
// record. The turn file keeps what fitted, ending with a whole line, and
// the turn says from which byte on how much was not recorded. The record
// is settled (never "running" forever), nothing keeps running, and a spawn
// on the full disk is refused with the same words and leaves no half-made
// session.
func TestFullDisk(t *testing.T) {
	w := newWorld(t)
	disk := smallDisk(t, "2m")
	w.MoveState(filepath.Join(disk, "state"))
	st := w.Store
	const printed = 4 << 20
	goOn := filepath.Join(t.TempDir(), "go-on")
	steps := []map[string]any{fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`), {"wait_file": goOn}, {"out_bytes": printed}}
	for i := 0; i < 20; i++ {
		steps = append(steps, map[string]any{"err": strings.Repeat("e", 8<<10)})
	}
	w.SetScript(fakeagent.Script{Default: append(steps, fakeagent.Completes("the final message", 4321)...)})

	s := w.spawn("fill the disk")
	fillTheDiskOnceRecording(t, st, s.ID, goOn)
	got := w.wait(s.ID)
	if got.Status() != record.StatusFailed || !strings.Contains(got.Error, "disk full") || !strings.Contains(got.Error, "no space left on device") {
		log, _ := os.ReadFile(st.LogPath(s.ID))
		t.Fatalf("%s: %q\nsupervisor log:\n%s", got.Status(), got.Error, log)
	}
	onDisk, err := st.Load(s.ID)
	if err != nil || !onDisk.Settled() || onDisk.Status() != record.StatusFailed {
		t.Fatalf("meta.json on disk: %v %v", onDisk, err)
	}
	if len(onDisk.Turns) != 1 || onDisk.LastMessage != "the final message" || onDisk.Usage.InputTokens != 4321 ||
		onDisk.ExitCode == nil || *onDisk.ExitCode != 0 {
		code := "none"
		if onDisk.ExitCode != nil {
			code = fmt.Sprint(*onDisk.ExitCode)
		}
		log, _ := os.ReadFile(st.LogPath(s.ID))
		t.Fatalf("the record lost the turn's end: %d turns, last message %q, usage %+v, exit code %s, error %q\nsupervisor log:\n%s",
			len(onDisk.Turns), onDisk.LastMessage, onDisk.Usage, code, onDisk.Error, log)
	}
	turn, err := os.ReadFile(st.TurnPath(s.ID, 1))
	if err != nil || len(turn) < 1<<20 || !strings.HasPrefix(string(turn), `{"type":"thread.started","thread_id":"t"}`+"\n") ||
		!strings.HasSuffix(string(turn), "\n") {
		t.Fatalf("the turn file lost what was written, or ends in the middle of a line: %d bytes, %v", len(turn), err)
	}
	// Everything the agent printed is either in the turn file or counted.
	note := fmt.Sprintf("disk full: output from byte %d on was not recorded (", len(turn))
	tr := onDisk.Turns[0]
	if !strings.Contains(tr.Error, note) || len(tr.Notes) != 2 || !strings.HasPrefix(tr.Notes[0], note) ||
		!strings.HasPrefix(tr.Notes[1], "disk full: stderr from byte ") {
		t.Fatalf("the turn does not say what was not recorded (want %q...): error %q, notes %q", note, tr.Error, tr.Notes)
	}
	var lost int
	fmt.Sscanf(strings.TrimPrefix(tr.Notes[0], note), "%d bytes)", &lost)
	if total := len(turn) + lost; total < printed || total > printed+4096 {
		t.Fatalf("%d bytes kept + %d not recorded, but the agent printed over %d", len(turn), lost, printed)
	}
	if left := w.Manager.Containment(s.ID).Procs(); len(left) > 0 {
		t.Fatalf("left running: %v", left)
	}

	_, err = w.Manager.Spawn(context.Background(), sessions.SpawnRequest{Task: "another", Adapter: "fake", WorkingDir: w.Work})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("spawn on a full disk: %v", err)
	}
	ents, _ := os.ReadDir(st.SessionsDir())
	for _, e := range ents {
		if e.Name() != s.ID && !strings.HasPrefix(e.Name(), ".probe") {
			t.Fatalf("a failed spawn left %s behind", e.Name())
		}
	}
	if list, err := w.Manager.List(context.Background(), listing.Options{}); err != nil || len(list) != 1 {
		t.Fatalf("list: %d sessions, %v", len(list), err)
	}
}

// The disk fills up while a turn runs (the agent's own work fills it), and
// then the agent prints on and says its last words: the turn fails as
// "disk full", yet its final message and usage, which reached the
// supervisor but not the turn file, are in the record, and what the turn
// file holds stays.
func TestFullDiskKeepsTheTurnsLastWords(t *testing.T) {
	w := newWorld(t)
	disk := smallDisk(t, "2m")
	w.MoveState(filepath.Join(disk, "state"))
	st := w.Store
	goOn := filepath.Join(t.TempDir(), "go-on")
	w.SetScript(fakeagent.Script{Default: append([]map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`),
		{"wait_file": goOn},
		{"run": "cat /dev/zero > " + filepath.Join(disk, "filler") + " 2>/dev/null; true"},
		// More than what is left of the turn file's last page.
		{"out_bytes": 64 << 10},
	}, fakeagent.Completes("the last words", 1234)[2:]...)})

	s := w.spawn("fill the disk, then finish")
	fillTheDiskOnceRecording(t, st, s.ID, goOn)
	got := w.wait(s.ID)
	if got.Status() != record.StatusFailed || !strings.Contains(got.Error, "disk full") {
		t.Fatalf("%s: %q", got.Status(), got.Error)
	}
	onDisk, err := st.Load(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if onDisk.LastMessage != "the last words" || onDisk.Usage.InputTokens != 1234 || len(onDisk.Turns) != 1 ||
		onDisk.Turns[0].Usage.InputTokens != 1234 || !strings.Contains(onDisk.Turns[0].Error+onDisk.Error, "disk full: output from byte ") {
		t.Fatalf("the record lost the turn's end: last message %q, usage %+v, error %q", onDisk.LastMessage, onDisk.Usage, onDisk.Error)
	}
	turn, err := os.ReadFile(st.TurnPath(s.ID, 1))
	if err != nil || !strings.HasPrefix(string(turn), `{"type":"thread.started","thread_id":"t"}`+"\n") {
		t.Fatalf("the turn file lost what was written: %q %v", turn, err)
	}
}

// The disk fills up while a turn runs, but the agent's last words still
// fit in its turn file: only the record cannot be saved meanwhile. The
// agent is not stopped for that, nothing of its output is lost, and the
// turn's end, its final message and usage, reach the record through the
// reserve: the turn completes.
func TestFullDiskWhileTheOutputStillFits(t *testing.T) {
	w := newWorld(t)
	disk := smallDisk(t, "2m")
	w.MoveState(filepath.Join(disk, "state"))
	st := w.Store
	goOn := filepath.Join(t.TempDir(), "go-on")
	w.SetScript(fakeagent.Script{Default: append([]map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`),
		{"wait_file": goOn},
		{"run": "cat /dev/zero > " + filepath.Join(disk, "filler") + " 2>/dev/null; true"},
		// Something to save, and the time for a save to be tried.
		fakeagent.Out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"working"}}`),
		{"sleep_ms": 600},
	}, fakeagent.Completes("the last words", 1234)[2:]...)})

	s := w.spawn("fill the disk, then finish")
	fillTheDiskOnceRecording(t, st, s.ID, goOn)
	got := w.wait(s.ID)
	onDisk, err := st.Load(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != record.StatusCompleted || onDisk.Status() != record.StatusCompleted || onDisk.LastMessage != "the last words" ||
		onDisk.Usage.InputTokens != 1234 || len(onDisk.Turns) != 1 || len(onDisk.Turns[0].Notes) != 0 {
		log, _ := os.ReadFile(st.LogPath(s.ID))
		t.Fatalf("%s (%s on disk): %q, last message %q, usage %+v\nsupervisor log:\n%s",
			got.Status(), onDisk.Status(), onDisk.Error, onDisk.LastMessage, onDisk.Usage, log)
	}
	turn, err := os.ReadFile(st.TurnPath(s.ID, 1))
	if err != nil || !strings.Contains(string(turn), "the last words") || !strings.Contains(string(turn), "turn.completed") {
		t.Fatalf("the turn file lost its end: %q %v", turn, err)
	}
}

// fillTheDiskOnceRecording lets the agent fill the disk (it waits for
// goOn) once the spawn is done and the first line of the turn is in its
// file.
func fillTheDiskOnceRecording(t *testing.T, st *state.Store, id, goOn string) {
	t.Helper()
	sessionstest.Eventually(t, "the turn's first line", func() bool {
		b, _ := os.ReadFile(st.TurnPath(id, 1))
		return strings.HasSuffix(string(b), "\n")
	})
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}
