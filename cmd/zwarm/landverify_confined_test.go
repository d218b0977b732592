package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A landing's verify runs the worker's code (its tests), and must not
// reach what the worker's sandbox kept it from: it writes its checkout,
// $TMPDIR and the build caches, and nothing of yours, not your checkout,
// your repository's hooks, the state dir's config.toml (which names
// commands zwarm runs) or your home. Whatever it tried, nothing landed
// that it wrote outside the change.
func TestLandVerifyWritesOnlyItsCheckout(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	home := t.TempDir()
	w.extraEnv = append(w.extraEnv, "HOME="+home)
	victims := []string{
		filepath.Join(w.Work, "a.txt"),
		filepath.Join(w.Work, ".git", "hooks", "pre-commit"),
		filepath.Join(w.State, "config.toml"),
		filepath.Join(home, ".bashrc"),
	}
	var script strings.Builder
	script.WriteString("set -u\n")
	for _, v := range victims {
		script.WriteString("(echo pwned >> '" + v + "') 2>/dev/null && echo \"wrote " + v + "\"\n")
	}
	script.WriteString("echo ok > \"$TMPDIR/scratch\" && cat \"$TMPDIR/scratch\" >/dev/null && echo tmp-ok\n")
	script.WriteString("echo built > build.out && echo checkout-ok\n")
	w.setScript(agentDoes("cat > check.sh <<'EOF'\n" + script.String() + "EOF\n"))
	id := strings.Fields(w.ok("spawn", "--wait", "add a check"))[0]
	before := map[string]string{}
	for _, v := range victims {
		b, _ := os.ReadFile(v)
		before[v] = string(b)
	}
	r := w.zwarm("land", id, "--verify", "sh check.sh")
	if r.code != 0 {
		t.Fatalf("land --verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	if strings.Contains(out, "wrote ") || !strings.Contains(out, "tmp-ok") || !strings.Contains(out, "checkout-ok") {
		t.Errorf("the verify's output:\n%s", out)
	}
	for _, v := range victims {
		if b, _ := os.ReadFile(v); string(b) != before[v] && !(v == victims[0] && string(b) == "a\n") {
			t.Errorf("%s was changed by the verify: %q", v, b)
		}
	}
	if _, err := os.Stat(filepath.Join(w.Work, "build.out")); err == nil {
		t.Error("what the verify built in its checkout landed")
	}
}

// Run from a terminal, the verify still reaches none of it: not the
// terminal (whose input it could type into for your shell to run), not
// the worker's worktree (whose next turn would commit what it left), not
// a device it makes, not the zwarm that started it (to signal or trace);
// its build tools' caches are its own, empty.
func TestLandVerifyReachesNoTerminalNorTheWorkersWorktree(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	script := `(echo typed > /dev/tty) 2>/dev/null && echo "WROTE the terminal"
(echo planted > "$WORKTREE/planted.txt") 2>/dev/null && echo "WROTE the worktree"
(mknod /dev/zwarm-verify-$$ c 1 3) 2>/dev/null && rm -f /dev/zwarm-verify-$$ && echo "MADE a device"
(echo x > /dev/shm/zwarm-verify-$$) 2>/dev/null && rm /dev/shm/zwarm-verify-$$ && echo "WROTE /dev/shm"
(echo x > /dev/null) && echo devnull-ok
setsid sh -c 'sleep 300' </dev/null >/dev/null 2>&1 &
echo "left=$!"
z=$$; while [ "$z" -gt 1 ] && [ "$(cat /proc/$z/comm)" != zwarm ]; do z=$(awk '/^PPid/ {print $2}' /proc/$z/status); done
[ "$z" -gt 1 ] && echo "found zwarm"
kill -0 $z 2>/dev/null && echo "SIGNALLED zwarm land"
grep -q "NoNewPrivs:.1" /proc/$z/status && echo "WROTE: zwarm land is confined itself"
echo "gocache=$GOCACHE"
`
	w.setScript(agentDoes("cat > check.sh <<'EOF'\n" + script + "EOF\n"))
	id := strings.Fields(w.ok("spawn", "--wait", "add a check"))[0]
	wt := w.show(id).Worktree
	out, code := w.onTerminal(100, []string{"WORKTREE=" + wt}, "", "land", id, "--verify", "sh check.sh")
	out = visible(out)
	if code != 0 || strings.Contains(out, "WROTE") || strings.Contains(out, "MADE") || strings.Contains(out, "SIGNALLED") || !strings.Contains(out, "found zwarm") || !strings.Contains(out, "devnull-ok") || !strings.Contains(out, "/zwarm-verify-") {
		t.Fatalf("land --verify on a terminal: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(wt, "planted.txt")); err == nil {
		t.Error("the verify wrote the worker's worktree")
	}
	// What it left running, out of its process group, is gone with it.
	if i := strings.Index(out, "left="); i >= 0 {
		if pid, err := strconv.Atoi(strings.Fields(out[i+len("left="):])[0]); err == nil && sessionstest.Alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the process the verify left (pid %d) outlived it", pid)
		}
	}
}

// A path linked in from the worker's worktree is writable to the verify
// only as the worktree's own file or directory: one the worker made a
// symlink (to your .git, whose hooks then run as you) is not, nor is one
// zwarm linked to your checkout ([worktrees] symlink).
func TestLandVerifyWritesNoLinkedInSymlinksTarget(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{".gitignore": ".env\nnode_modules\n", "a.txt": "a\n"})
	writeFile(t, filepath.Join(w.Work, ".env"), "SECRET=1\n")
	os.MkdirAll(filepath.Join(w.Work, "node_modules"), 0o755)
	writeFile(t, filepath.Join(w.Work, "node_modules", "x.js"), "orig\n")
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\ncopy = [\".env\"]\nsymlink = [\"node_modules\"]\n")
	gitDir := filepath.Join(w.Work, ".git")
	script := `(echo pwned > .env/hooks/post-checkout) 2>/dev/null && echo "WROTE your hooks"
(echo pwned >> node_modules/x.js) 2>/dev/null && echo "WROTE your node_modules"
echo done-trying
`
	w.setScript(agentDoes("rm -f .env && ln -s '" + gitDir + "' .env && cat > check.sh <<'EOF'\n" + script + "EOF\n"))
	id := strings.Fields(w.ok("spawn", "--wait", "add a check"))[0]
	r := w.zwarm("land", id, "--verify", "sh check.sh")
	out := r.stdout + r.stderr
	if strings.Contains(out, "WROTE") || !strings.Contains(out, "done-trying") {
		t.Fatalf("land --verify: exit %d\n%s", r.code, out)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "hooks", "post-checkout")); err == nil {
		t.Error("the verify wrote a hook in your repository")
	}
	if b, _ := os.ReadFile(filepath.Join(w.Work, "node_modules", "x.js")); string(b) != "orig\n" {
		t.Errorf("your node_modules/x.js holds %q", b)
	}
}

// A verify's build caches are its own and start empty: what one worker's
// verify leaves in them (a poisoned Go build cache entry) never reaches
// another's, whose failing tests it could make pass.
func TestEachVerifyHasCachesOfItsOwn(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	script := `for d in "$GOCACHE" "$XDG_CACHE_HOME" "$npm_config_cache"; do
  [ -e "$d/planted" ] && echo "FOUND what an earlier verify planted in $d"
  mkdir -p "$d" && echo poison > "$d/planted"
done
echo planted`
	w.setScript(fakeagent.Completes("done", 700),
		"first", agentDoes("cat > check.sh <<'EOF'\n"+script+"\nEOF\n"),
		"second", agentDoes("cat > check.sh <<'EOF'\n"+script+"\nEOF\necho 2 > b.txt"))
	for _, task := range []string{"first", "second"} {
		id := strings.Fields(w.ok("spawn", "--wait", task))[0]
		r := w.zwarm("land", id, "--verify", "sh check.sh")
		if out := r.stdout + r.stderr; r.code != 0 || strings.Contains(out, "FOUND") || !strings.Contains(out, "planted") {
			t.Fatalf("%s: exit %d\n%s", task, r.code, out)
		}
	}
}
