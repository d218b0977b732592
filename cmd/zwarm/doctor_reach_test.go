package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doctor notes a repository or state dir that codex's workspace-write
// sandbox lets workers write (/tmp, which holds this test's), and how to
// keep it out of reach; with that done, it says nothing of it.
func TestDoctorNotesWhatTheSandboxReaches(t *testing.T) {
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	os.MkdirAll(w.State, 0o700)
	r := w.here("doctor")
	if !strings.Contains(r.stdout, "! sandbox      codex workers may write /tmp, which holds ") || !strings.Contains(r.stdout, "set exclude_slash_tmp = true under [sandbox_workspace_write] in codex.toml") {
		t.Fatalf("doctor, exit %d:\n%s", r.code, r.stdout)
	}
	writeFile(t, filepath.Join(w.State, "codex.toml"), "[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n")
	if r := w.here("doctor"); strings.Contains(r.stdout, "sandbox") {
		t.Fatalf("doctor with /tmp excluded:\n%s", r.stdout)
	}
}
