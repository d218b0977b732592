package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A typo in config.toml is reported whatever the command, once: a command
// that refuses says why (exit 2), one that goes on warns, with the
// defaults taken. show, land, rm, runs and others said nothing, and land
// landed.
func TestEveryCommandReportsABrokenConfigOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "quick"))[0]
	if err := os.WriteFile(filepath.Join(w.State, "config.toml"), []byte("kill_grac = \"2s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const typo = "unknown key kill_grac"
	for _, args := range [][]string{{"show", id}, {"logs", id}, {"ls"}, {"runs"}, {"rm", "--dry-run", "--all"}, {"clean"}, {"kill", "--all"}, {"wait", id}, {"diff", id}, {"spawn", "again"}, {"doctor"}} {
		r := w.zwarm(args...)
		if n := strings.Count(r.stdout+r.stderr, typo); n != 1 {
			t.Errorf("zwarm %s: the typo named %d times (exit %d)\nstdout %q\nstderr %q", strings.Join(args, " "), n, r.code, r.stdout, r.stderr)
		}
	}
}

// The config a command warns about is the one it ran with, read as it
// began to use the state dir: a typo written while a wait waits is not
// blamed on the wait, which read a good config (it was, when the config
// was read after the command's end).
func TestAConfigBrokenWhileACommandRunsIsNotItsWarning(t *testing.T) {
	t.Parallel()
	w, id := blockedWorld(t)
	cmd := exec.Command(bins.zwarm, "wait", id)
	cmd.Dir, cmd.Env = w.Work, w.env()
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sessionstest.Eventually(t, "the wait to watch the session", func() bool { return watchesFiles(cmd.Process.Pid) })
	if err := os.WriteFile(filepath.Join(w.State, "config.toml"), []byte("kill_grac = \"2s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitOf(t, cmd, &out); code != cli.ExitInterrupted {
		t.Fatalf("zwarm wait, interrupted: exit %d, want %d\n%s", code, cli.ExitInterrupted, out.String())
	}
	if strings.Contains(out.String(), "kill_grac") {
		t.Errorf("zwarm wait warned of a config written after it read its own:\n%s", out.String())
	}
	if r := w.zwarm("show", id); strings.Count(r.stderr, "unknown key kill_grac") != 1 {
		t.Errorf("the next command did not report the typo once: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Two rm --all at once, and two kill --all: each takes what the other did
// for done (a session gone, or settled, meanwhile), exit 0. They failed,
// one with exit 2 ("no such session") after it had removed the rest.
func TestBulkCommandsRacingEachOtherBothSucceed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "never")
	w.setScript(fakeagent.Completes("done", 1), "hang", []fakeagent.Step{{"wait_file": gate}})
	for range 16 {
		w.spawn("hang")
	}
	both := func(args ...string) {
		t.Helper()
		var wg sync.WaitGroup
		rs := make([]result, 2)
		for i := range rs {
			wg.Add(1)
			go func() { defer wg.Done(); rs[i] = w.zwarm(args...) }()
		}
		wg.Wait()
		for _, r := range rs {
			if r.code != 0 {
				t.Errorf("zwarm %s, two at once: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
			}
		}
	}
	both("kill", "--all")
	both("rm", "--all", "--yes")
	if left := w.ls(); len(left) != 0 {
		t.Fatalf("%d sessions left after two rm --all", len(left))
	}
}

// An agent's own settings file that is wrong (codex.toml, claude.toml)
// is the config being wrong, as config.toml's is: exit 2, the file
// named, nothing recorded. It was exit 1, as if the work had failed.
func TestABrokenAgentSettingsFileIsAConfigError(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.ok("init")
	for _, c := range []struct{ adapter, file, body, says string }{
		{"codex", "codex.toml", "model = [\n", "codex.toml"},
		{"claude", "claude.toml", "bogus = 1\n", "unknown key bogus"},
	} {
		if err := os.WriteFile(filepath.Join(w.State, c.file), []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		r := w.zwarm("spawn", "--adapter", c.adapter, "a task")
		if r.code != 2 || !strings.Contains(r.stderr, c.says) {
			t.Errorf("spawn --adapter %s with a broken %s: exit %d, stderr %q", c.adapter, c.file, r.code, r.stderr)
		}
	}
	if n := len(w.ls()); n != 0 {
		t.Errorf("%d sessions recorded by spawns that could not run", n)
	}
}

// kill and rm given several ids, one of them wrong, do nothing and exit
// 2: the exit that says nothing ran. They acted on the others first. A
// session given twice (by id and prefix) is acted on once.
func TestOneWrongIdAmongSeveralLeavesAllUndone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "never")
	w.setScript(fakeagent.Completes("done", 1), "hang", []fakeagent.Step{{"wait_file": gate}})
	running, done := w.spawn("hang"), w.spawn("done")
	w.ok("wait", done)
	for _, args := range [][]string{{"kill", running, "ffffffff"}, {"rm", done, "ffffffff"}, {"rm", "--force", running, "ffffffff"}} {
		r := w.zwarm(args...)
		if r.code != 2 || !strings.Contains(r.stderr, `"ffffffff"`) || !strings.Contains(r.stderr, "nothing was done to the other sessions given") {
			t.Errorf("zwarm %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if s := w.show(running); s.Settled() {
		t.Fatalf("the running session was stopped: %s", s.Status())
	}
	w.show(done) // still there
	r := w.zwarm("rm", done, done[:8])
	if r.code != 0 || strings.Count(r.stdout, "removed") != 1 {
		t.Fatalf("rm ID PREFIX: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = w.zwarm("kill", running, running[:8])
	if r.code != 0 || strings.Count(r.stdout, "killed") != 1 {
		t.Fatalf("kill ID PREFIX: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
