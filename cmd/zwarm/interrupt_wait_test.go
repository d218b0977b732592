package main

import (
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// A --wait interrupted after its action happened exits 130 but says what
// runs on: spawn --wait prints the worker's id, as without --wait, and how
// to stop it; inject --wait says the follow-up stays queued (or which turn
// it became) and how to stop it.
func TestInterruptedWaitSaysWhatRunsOn(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	cases := []struct {
		name string
		args func(w *world, id string) []string
		// check is what stdout and stderr must say; id is the running
		// session the world started with.
		check func(w *world, id, stdout, stderr string) string
	}{
		{name: "spawn --wait", args: func(*world, string) []string { return []string{"spawn", "--wait", "--", "another"} },
			check: func(w *world, id, stdout, stderr string) string {
				got := strings.TrimSpace(stdout)
				if !uuid.MatchString(got) || got == id {
					return "stdout is not the new session's id"
				}
				short := record.ShortID(got)
				if !strings.Contains(stderr, "session "+short+" keeps running") || !strings.Contains(stderr, "zwarm kill "+short) {
					return "stderr does not say the worker keeps running and how to stop it"
				}
				if s := w.record(got); s.Settled() {
					return "the worker is " + string(s.Status())
				}
				return ""
			}},
		{name: "inject --wait", args: func(_ *world, id string) []string { return []string{"inject", "--wait", id, "and then"} },
			check: func(w *world, id, stdout, stderr string) string {
				if !strings.Contains(stderr, "queued behind") || !strings.Contains(stderr, "the follow-up stays queued") ||
					!strings.Contains(stderr, "zwarm kill "+record.ShortID(id)) {
					return "stderr does not say the follow-up stays queued"
				}
				return ""
			}},
		// A follow-up to a finished session starts its next turn: the
		// interruption comes while it is queued for the new supervisor or
		// after it became turn 2.
		{name: "inject --wait (next turn)", args: func(w *world, _ string) []string {
			done := w.spawn("quick")
			w.ok("wait", done)
			return []string{"inject", "--wait", done, "and then"}
		}, check: func(w *world, _, stdout, stderr string) string {
			if !strings.Contains(stderr, "the follow-up stays queued") && !strings.Contains(stderr, "the follow-up became turn 2, which goes on") {
				return "stderr does not say what became of the follow-up"
			}
			if !strings.Contains(stderr, "zwarm kill ") {
				return "stderr does not say how to stop it"
			}
			return ""
		}},
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, c := range cases {
			t.Run(c.name+" "+sig.String(), func(t *testing.T) {
				t.Parallel()
				w, id := blockedWorld(t)
				cmd := exec.Command(bins.zwarm, c.args(w, id)...)
				cmd.Dir, cmd.Env = w.Work, w.env()
				var stdout, stderr lockedBuffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				sessionstest.Eventually(t, c.name+" to block", func() bool { return watchesFiles(cmd.Process.Pid) })
				cmd.Process.Signal(sig)
				if code := exitOf(t, cmd, &stderr); code != cli.ExitInterrupted {
					t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, cli.ExitInterrupted, stdout.String(), stderr.String())
				}
				if msg := c.check(w, id, stdout.String(), stderr.String()); msg != "" {
					t.Fatalf("%s\nstdout: %q\nstderr: %q", msg, stdout.String(), stderr.String())
				}
			})
		}
	}
}
