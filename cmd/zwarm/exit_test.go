package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
)

// One rule for exit codes across every command: 0 ok, 1 the work failed,
// 2 the command line, an id or the config is wrong (nothing ran), 124 a
// wait that timed out.
func TestExitCodesOfEveryCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(fakeagent.Completes("fine", 5),
		"fails", []fakeagent.Step{fakeagent.Out(`{"type":"turn.failed","error":{"message":"nope"}}`), {"exit": 1}},
		// A follow-up to it (no thread began) comes with its task.
		state.WithTask("fails", "fails"), []fakeagent.Step{fakeagent.Out(`{"type":"turn.failed","error":{"message":"nope"}}`), {"exit": 1}},
		"hang", []fakeagent.Step{{"wait_file": gate}})
	done := strings.Fields(w.ok("spawn", "--wait", "ok task"))[0]
	failed := strings.Fields(w.zwarm("spawn", "--wait", "fails").stdout)[0]
	hanging := w.spawn("hang")
	doomed := w.spawn("hang")
	removable := strings.Fields(w.ok("spawn", "--wait", "ok task"))[0]
	for _, id := range []string{"3f2a0000-0000-4000-8000-000000000001", "3f2a0000-0000-4000-8000-000000000002"} {
		writeLegacy(t, w.State, id)
	}
	cases := []struct {
		args []string
		code int
	}{
		{[]string{}, 0},
		{[]string{"sapwn"}, 2},
		{[]string{"ls", "--nope"}, 2},
		{[]string{"version"}, 0},
		{[]string{"--version"}, 0},
		{[]string{"help", "spawn"}, 0},
		{[]string{"completion", "bash"}, 0},
		{[]string{"completion", "tcsh"}, 2},
		{[]string{"help", "sapwn"}, 2},
		{[]string{"help"}, 0},

		{[]string{"spawn", "--wait", "ok task"}, 0},
		{[]string{"spawn", "--wait", "fails"}, 1},
		{[]string{"spawn"}, 2},
		{[]string{"spawn", "--adapter", "gemini", "x"}, 2},
		{[]string{"spawn", "--sandbox", "bogus", "x"}, 2},
		{[]string{"spawn", "--jq", ".[", "x"}, 2},

		{[]string{"ls"}, 0},
		{[]string{"ls", "--status", "done"}, 2},
		{[]string{"ls", "--limit", "-1"}, 2},
		{[]string{"ls", "--jq", ".["}, 2},

		{[]string{"show", done}, 0},
		{[]string{"show", "abcdef"}, 2},
		{[]string{"show", "3f2a"}, 2},
		{[]string{"show", "../x"}, 2},

		{[]string{"logs", done}, 0},
		{[]string{"logs", "--turn", "99", done}, 2},
		{[]string{"logs", "--turn", "0", done}, 2},
		{[]string{"logs", "--raw", "--turn", "99", done}, 2},
		{[]string{"logs", "--raw", "-f", done}, 2},

		{[]string{"inject", done, "more"}, 0},
		{[]string{"inject", done, " "}, 2},
		{[]string{"inject", "abcdef", "more"}, 2},
		{[]string{"inject", "--wait", failed, "fails"}, 1},

		{[]string{"wait", done}, 0},
		{[]string{"wait", failed}, 1},
		{[]string{"wait", "--timeout", "100ms", hanging}, 124},
		{[]string{"wait", "abcdef"}, 2},
		{[]string{"wait", "--timeout", "-1s", done}, 2},

		{[]string{"kill", doomed}, 0},
		{[]string{"kill", removable}, 1},
		{[]string{"kill"}, 2},
		{[]string{"kill", "abcdef"}, 2},

		{[]string{"rm", hanging}, 1},
		{[]string{"rm", removable}, 0},
		{[]string{"rm"}, 2},
		{[]string{"rm", "--all"}, 2}, // not a terminal: --yes needed

		{[]string{"clean"}, 0},
		{[]string{"clean", "--older-than", "soon"}, 2},

		{[]string{"dash", "extra"}, 2},
		{[]string{"dash"}, 2}, // not a terminal
		{[]string{"demo", "--speed", "0"}, 2},
		{[]string{"demo", "--replays", t.TempDir()}, 2},
		{[]string{"doctor"}, 0},
		{[]string{"init", "--state-dir", filepath.Join(t.TempDir(), "new")}, 0},
	}
	if r := w.zwarm("sapwn"); !strings.Contains(r.stderr, "did you mean spawn?") {
		t.Errorf("no suggestion: %q", r.stderr)
	}
	for _, c := range cases {
		r := w.zwarm(c.args...)
		if r.code != c.code {
			t.Errorf("zwarm %q: exit %d, want %d\nstdout: %s\nstderr: %s", c.args, r.code, c.code, r.stdout, r.stderr)
		}
	}
	touch(t, gate)

	// A config that is wrong stops what reads it with 2; doctor says so
	// with 1, and a kill goes on with the default grace, warning.
	bad := newWorld(t)
	bad.setScript(nil, "hang", []fakeagent.Step{{"wait_file": gate + "-never"}})
	id := bad.spawn("hang")
	sessionstest.Eventually(t, "the agent to run", func() bool { return bad.record(id).Agent != nil })
	writeFile(t, filepath.Join(bad.State, "config.toml"), "kill_grace = \"1s\"\n[adapters.codex]\nmodle = \"x\"\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"spawn", "x"}, 2, "modle"},
		{[]string{"doctor"}, 1, "modle"},
		{[]string{"kill", id}, 0, "warning"},
	} {
		if r := bad.zwarm(c.args...); r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
			t.Errorf("broken config: zwarm %q: exit %d, want %d mentioning %q\nstdout: %s\nstderr: %s", c.args, r.code, c.code, c.want, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(bad.State, "sessions", id)); err != nil {
		t.Fatal(err)
	}
}

// Without a terminal, the full-screen commands say what to do instead of
// naming /dev/tty, and start nothing.
func TestFullScreenCommandsWithoutATerminal(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dash"}, "zwarm ls, zwarm logs -f and zwarm watch"},
		{[]string{"demo"}, "zwarm demo --no-tui"},
	} {
		r := w.zwarm(c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, "draws on a terminal") || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "/dev/tty") {
			t.Errorf("%v: exit %d %q", c.args, r.code, r.stderr)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(w.State, "sessions")); len(ents) != 0 {
		t.Errorf("made %d sessions", len(ents))
	}
}

// A state dir that is a file is a wrong command line (exit 2), said once
// and plainly, whichever command meets it; doctor still reports on it.
func TestAStateDirThatIsAFile(t *testing.T) {
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ls"}, {"spawn", "--in-place", "x"}, {"show", "abcdef"}, {"clean"}} {
		r := w.zwarm(append([]string{"--state-dir", file}, args...)...)
		want := "zwarm: state dir " + file + " is a file, not a directory: --state-dir must name a directory (zwarm makes it on first use)\n"
		if r.code != 2 || r.stderr != want {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if r := w.zwarm("--state-dir", file, "doctor"); r.code != 1 || !strings.Contains(r.stdout, "✗ state dir    "+file+" is not a directory") {
		t.Errorf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(file); string(b) != "mine\n" {
		t.Errorf("the file was changed: %q", b)
	}
}
