package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// changeStat is the "+N -M in K files" of what diff, land --dry-run and
// land print.
var changeStat = regexp.MustCompile(`\+\d+ -\d+ in \d+ files?`)

// diff, land --dry-run and land act on one change, whatever a real worker
// (codex in its sandbox, claude) left behind:
//
//   - its supervisor killed mid-turn with its work uncommitted: the dry
//     run counts that work, and land lands it;
//   - its branch reset below its base: diff shows the base's newest file
//     deleted and its own added, and land lands exactly that;
//   - a conflict with main resolved by hand in its worktree: the dry run
//     and the landing agree, and the resolution lands.
//
// And two workers writing one file with the shell (no patch tool) raise
// the overlap alert.
func TestRealAgentDiffDryRunAndLandAgree(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realRepoWorld(t, a.name)
		worker := func(task, script string) session {
			t.Helper()
			return w.spawnWorker(srv, a, task, script)
		}
		agree := func(id, want string) {
			t.Helper()
			dry := w.ok("land", "--dry-run", id)
			if got := changeStat.FindString(dry); got != want {
				t.Fatalf("land --dry-run %s: %q, want %s:\n%s", id[:8], got, want, dry)
			}
			landed := w.ok("land", id)
			if got := changeStat.FindString(landed); got != want {
				t.Fatalf("land %s: %q, want what the dry run said, %s:\n%s", id[:8], got, want, landed)
			}
		}

		// Killed mid-turn, its work uncommitted.
		srv.On("half a job", fakemodel.Reply{Tool: a.tool, Args: a.args("echo half > half.txt && sleep 300")}, fakemodel.Reply{Text: "done"})
		id := strings.TrimSpace(w.ok("spawn", "half a job"))
		var sup []int
		sessionstest.Eventually(t, "the worker to write half.txt", func() bool {
			s := w.show(id)
			// Its content, not only the file: the shell makes the file
			// empty before echo writes, and a kill between the two
			// leaves a change of no lines.
			b, err := os.ReadFile(filepath.Join(s.Worktree, "half.txt"))
			sup = proc.SupervisorsOf(id)
			return s.Worktree != "" && err == nil && string(b) == "half\n" && len(sup) == 1
		})
		syscall.Kill(sup[0], syscall.SIGKILL)
		if r := w.zwarm("wait", id); r.code != 1 {
			t.Fatalf("wait for a worker whose supervisor was killed: %+v; want exit 1, it failed", r)
		}
		if d := w.ok("diff", "--name-only", id); d != "half.txt\n" {
			t.Fatalf("diff of a worker killed with its work uncommitted: %q", d)
		}
		agree(id, "+1 -0 in 1 file")

		// Reset below its base: main's newest file (half.txt, just landed)
		// deleted, its own added.
		reset := worker("reset and write", "git reset -q --hard HEAD~1 && echo w > w.txt && echo reset-made")
		if d := w.ok("diff", "--name-only", reset.ID); d != "half.txt\nw.txt\n" {
			t.Fatalf("diff of a branch reset below its base: %q\n%s", d, w.commandOutput(srv))
		}
		agree(reset.ID, "+1 -1 in 2 files")
		if got := w.git(w.Work, "ls-files"); got != "README.md\nw.txt" {
			t.Fatalf("main after landing the reset branch: %q; want what diff showed", got)
		}

		// A conflict resolved by hand.
		first := worker("first edit", `printf '# api\nfirst\n' > README.md && echo first-made`)
		second := worker("second edit", `printf '# api\nsecond\n' > README.md && echo b > b.txt && echo second-made`)
		w.ok("land", first.ID)
		if r := w.zwarm("land", second.ID); r.code == 0 || !strings.Contains(r.stderr, "README.md") {
			t.Fatalf("the second landing found no conflict: %+v", r)
		}
		merge := exec.Command("git", "merge", "-q", w.git(w.Work, "rev-parse", "main"))
		merge.Dir, merge.Env = second.Worktree, w.env()
		if out, err := merge.CombinedOutput(); err == nil {
			t.Fatalf("the hand merge did not conflict: %s", out)
		}
		writeFile(t, filepath.Join(second.Worktree, "README.md"), "# api\nfirst and second\n")
		w.git(second.Worktree, "add", "README.md")
		w.git(second.Worktree, "commit", "-q", "--no-edit")
		agree(second.ID, "+2 -0 in 2 files")
		if got := w.git(w.Work, "show", "main:README.md"); got != "# api\nfirst and second" {
			t.Fatalf("README.md on main: %q, want the hand resolution", got)
		}

		// Shell edits of one file by two workers.
		wa := w.startWatch("--json")
		one := worker("write shared one", `echo one > shared.txt && echo wrote`)
		two := worker("write shared two", `echo two > shared.txt && echo wrote`)
		line := wa.waitLine(`"watcher":"overlap"`, "shared.txt")
		if !strings.Contains(line, one.ID[:8]) || !strings.Contains(line, two.ID[:8]) {
			t.Fatalf("the overlap alert does not name both workers (%s, %s): %s", one.ID[:8], two.ID[:8], line)
		}
	})
}
