package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// zwarm diff piped is a patch git apply takes whole, binary files
// included (the docs show zwarm diff ID | git apply); on a terminal it
// stays readable, so this is about piped output only.
func TestDiffPipedIntoGitApplyTakesBinaryFiles(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.setScript(agentDoes(`printf '\000\001\002\377binary' > blob.bin; echo text > t.txt`))
	id := strings.TrimSpace(w.ok("spawn", "add a binary"))
	w.ok("wait", id)
	patch := w.ok("diff", id)
	clone := filepath.Join(t.TempDir(), "clone")
	w.git(w.Work, "clone", "-q", w.Work, clone)
	apply := exec.Command("git", "apply")
	apply.Dir, apply.Env, apply.Stdin = clone, w.env(), strings.NewReader(patch)
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("zwarm diff | git apply: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(filepath.Join(w.show(id).Worktree, "blob.bin"))
	if got, err := os.ReadFile(filepath.Join(clone, "blob.bin")); err != nil || !bytes.Equal(got, want) || len(want) == 0 {
		t.Fatalf("blob.bin after git apply: %q %v, want %q", got, err, want)
	}
}
