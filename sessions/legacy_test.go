package sessions_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

const pythonRecord = `{"id":"3f2a","task":"fix it","status":"running","working_dir":"/w","created_at":"2025-03-01T10:00:00.123456",
"updated_at":1740823200.5,"pid":%d,"exit_code":null,"model":"gpt-5.1-codex-mini","turn":2,
"messages":[{"role":"user","content":"fix it","timestamp":"2025-03-01T10:00:00"},{"role":"assistant","content":"fixed","timestamp":"x","metadata":{}},
{"role":"user","content":"and the docs","timestamp":"2025-03-01T10:05:00"}],
"token_usage":{"input_tokens":100,"output_tokens":20},"error":null,"source":"orchestrator:9c1d","adapter":"codex"}`

func TestDecodeLegacy(t *testing.T) {
	s, err := state.DecodeSession("meta.json", "3f2a", []byte(fmtRecord(pythonRecord, 1<<22)))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Legacy || s.LastMessage != "fixed" || s.Usage.TotalTokens != 120 || s.Source != record.RunSource("9c1d") {
		t.Fatalf("%+v", s)
	}
	if s.CreatedAt.IsZero() || s.UpdatedAt.IsZero() {
		t.Fatalf("times not parsed: %v %v", s.CreatedAt, s.UpdatedAt)
	}
	if err := tempStore(t).Save(s); err == nil {
		t.Fatal("a legacy record was written")
	}
	if _, err := state.DecodeSession("meta.json", "x", []byte(`{"version": 99, "id": "x"}`)); err == nil {
		t.Fatal("future schema accepted")
	}
}

// A Python record left "running" whose worker is gone is shown failed, with
// a runtime that stops at its last update, a cost from the price table and
// its turns' prompts from its messages.
func TestLegacyRecordWithADeadWorker(t *testing.T) {
	m := sessions.ManagerOn(tempStore(t))
	s, _ := state.DecodeSession("meta.json", "3f2a", []byte(fmtRecord(pythonRecord, 1<<22)))
	s = m.Current(s)
	if s.Status() != record.StatusFailed || s.Error == "" || !s.Settled() {
		t.Fatalf("status %s, error %q", s.Status(), s.Error)
	}
	if r1, r2 := s.Runtime(time.Now()), s.Runtime(time.Now().Add(1000*time.Hour)); r1 != r2 || r1 > time.Hour {
		t.Fatalf("runtime keeps growing or is wrong: %v then %v", r1, r2)
	}
	if s.CostUSD == nil || *s.CostUSD <= 0 {
		t.Fatalf("a priced model shows no cost: %v", s.CostUSD)
	}
	dir := filepath.Join(t.TempDir(), "turns")
	os.MkdirAll(dir, 0o700)
	for _, n := range []string{"turn_1.jsonl", "turn_2.jsonl"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	turns := state.LegacyTurns(dir, s)
	if len(turns) != 2 || turns[0].Prompt != "fix it" || turns[1].Prompt != "and the docs" {
		t.Fatalf("turn prompts: %+v", turns)
	}
}

// A Python record whose worker is alive is shown running, not failed.
func TestLegacyRecordWithALiveWorker(t *testing.T) {
	// A process whose command line names codex, started after the record.
	dir := t.TempDir()
	bin := filepath.Join(dir, "codex")
	if err := os.Symlink("/bin/sleep", bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Start returns while the kernel may still be setting up the new
	// program: its command line reads empty for that instant. A Python
	// worker is long past it.
	sessionstest.Eventually(t, "the command line of the worker", func() bool {
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
		return len(c) > 0
	})
	m := sessions.ManagerOn(tempStore(t))
	s, _ := state.DecodeSession("meta.json", "3f2a", []byte(fmtRecord(pythonRecord, cmd.Process.Pid)))
	s = m.Current(s)
	if s.Status() != record.StatusRunning || s.Settled() {
		t.Fatalf("a live Python worker shows %s: %q", s.Status(), s.Error)
	}
}

func fmtRecord(format string, pid int) string { return fmt.Sprintf(format, pid) }

// Nothing this zwarm does to a Python session changes its directory: not
// a follow-up, a kill or a removal, refused or not.
func TestPythonSessionDirIsNeverTouched(t *testing.T) {
	w := newWorld(t)
	id := "9c1d0000-0000-4000-8000-000000000001"
	dir := w.Store.SessionDir(id)
	os.MkdirAll(dir, 0o700)
	os.WriteFile(w.Store.MetaPath(id), []byte(strings.Replace(fmtRecord(pythonRecord, 1<<22), `"3f2a"`, `"`+id+`"`, 1)), 0o600)
	before, _ := os.ReadDir(dir)
	ctx := context.Background()
	if _, err := w.Manager.Inject(ctx, id, "more"); err == nil {
		t.Error("inject into a Python session")
	}
	if _, err := w.Manager.Kill(ctx, id); err == nil {
		t.Error("kill of a Python session")
	}
	if _, err := w.Manager.Remove(ctx, id, true); err == nil {
		t.Error("rm --force of a Python session")
	}
	if _, err := w.Manager.List(ctx, listing.Options{}); err != nil {
		t.Error(err)
	}
	after, _ := os.ReadDir(dir)
	if len(after) != len(before) {
		t.Fatalf("the Python session's directory changed: %v -> %v", before, after)
	}
}

// tempStore is a store in a directory of the test's own.
func tempStore(t *testing.T) *state.Store {
	t.Helper()
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}
