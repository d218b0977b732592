package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// land --verify runs its command in a checkout of its own, and whatever
// ends land (SIGKILL, a closed terminal) ends what the command started,
// setsid'd escapers included; the worker's worktree is never left on a
// detached HEAD with the verify's edits, so the next landing lands the
// worker's change and nothing of the verify's.
func TestLandVerifyDiesWithLandAndLeavesTheWorktreeAlone(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := repoWorld(t, map[string]string{"a.txt": "a\n"})
			w.setScript(agentDoes("echo b > b.txt"))
			id := strings.TrimSpace(w.ok("spawn", "add b"))
			w.ok("wait", id)
			wt := w.show(id).Worktree
			head := w.git(wt, "rev-parse", "HEAD")
			dir := t.TempDir()
			w.LetVerifyWrite(dir) // where it leaves its pids
			verify := "echo junk >> a.txt; setsid sh -c 'sleep 300 & printf %s $! > " + filepath.Join(dir, "escaper") + "; wait' & sleep 300 & printf %s $! > " + filepath.Join(dir, "sleeper") + "; wait"
			cmd := exec.Command(bins.zwarm, "land", id, "--verify", verify)
			cmd.Dir, cmd.Env = w.Work, w.env()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill() // should the test fail before it is signalled
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			sessionstest.Eventually(t, "the verify to start its processes", func() bool {
				select {
				case err := <-exited:
					t.Fatalf("land ended before it was signalled: %v\n%s", err, stderr.String())
				default:
				}
				_, e1 := os.Stat(filepath.Join(dir, "escaper"))
				_, e2 := os.Stat(filepath.Join(dir, "sleeper"))
				return e1 == nil && e2 == nil
			})
			escaper, sleeper := readPID(t, filepath.Join(dir, "escaper")), readPID(t, filepath.Join(dir, "sleeper"))
			defer syscall.Kill(escaper, syscall.SIGKILL)
			defer syscall.Kill(sleeper, syscall.SIGKILL)
			cmd.Process.Signal(sig)
			err := <-exited
			if sig == syscall.SIGHUP {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
					t.Fatalf("land after SIGHUP: %v, stderr %q; want exit 130, as for Ctrl-C", err, stderr.String())
				}
			}
			sessionstest.Eventually(t, "the verify's processes to die with land", func() bool { return !sessionstest.Alive(escaper) && !sessionstest.Alive(sleeper) })
			if got := w.git(wt, "rev-parse", "HEAD"); got != head {
				t.Fatalf("the worker's worktree is at %s after the cut-short land, want its head %s", got, head)
			}
			if st := w.git(wt, "status", "--porcelain"); st != "" {
				t.Fatalf("the worker's worktree after the cut-short land: %q", st)
			}
			if got := w.git(w.Work, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
				t.Fatalf("your checkout is on %q", got)
			}
			// The next landing lands the worker's change, not the verify's,
			// and takes away the checkout the killed land left, verified
			// or not.
			w.ok("land", id)
			if b, _ := os.ReadFile(filepath.Join(w.Work, "a.txt")); string(b) != "a\n" {
				t.Fatalf("a.txt in your checkout after landing: %q; the verify's junk landed", b)
			}
			if wts := w.git(w.Work, "worktree", "list", "--porcelain"); strings.Contains(wts, "verify-") {
				t.Fatalf("a verify checkout is left:\n%s", wts)
			}
		})
	}
}

// --verify-timeout stops a verify that runs too long: nothing lands, the
// error says which limit, and a bad value is a usage error.
func TestLandVerifyTimeout(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.setScript(agentDoes("echo b > b.txt"))
	id := strings.TrimSpace(w.ok("spawn", "add b"))
	w.ok("wait", id)
	before := w.git(w.Work, "rev-parse", "main")
	r := w.zwarm("land", id, "--verify", "sleep 300", "--verify-timeout", "1s")
	if r.code != 1 || !strings.Contains(r.stderr, "did not finish within 1s") || !strings.Contains(r.stderr, "--verify-timeout") {
		t.Fatalf("land with a verify over its time: %+v", r)
	}
	if got := w.git(w.Work, "rev-parse", "main"); got != before {
		t.Fatal("main moved though the verify timed out")
	}
	if r := w.zwarm("land", id, "--verify", "true", "--verify-timeout", "0s"); r.code != 2 || !strings.Contains(r.stderr, "--verify-timeout") {
		t.Fatalf("--verify-timeout 0s: %+v", r)
	}
}
