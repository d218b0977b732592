package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// A person's own config.toml ($XDG_CONFIG_HOME/zwarm) holds what goes
// with them from project to project ([notify], a default model); the
// project's config.toml wins where both set a key. A personal file others
// may write is refused, naming it.
func TestPersonalConfigUnderTheProjects(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dir := filepath.Join(w.userConfigHome(), "zwarm")
	os.MkdirAll(dir, 0o700)
	personal := filepath.Join(dir, "config.toml")
	log := filepath.Join(t.TempDir(), "notified")
	writeFile(t, personal, fmt.Sprintf("[notify]\ncommand = 'echo \"$ZWARM_EVENT $ZWARM_ID\" >> %s'\non = [\"worker.completed\"]\n"+
		"[adapters.codex]\nmodel = \"personal-model\"\n[trust]\ndirs = []\n", log))
	told := func(id string) {
		t.Helper()
		sessionstest.Eventually(t, "the personal notify command to run for "+id, func() bool {
			b, _ := os.ReadFile(log)
			return strings.Contains(string(b), "worker.completed "+id)
		})
	}

	mine := strings.TrimSpace(strings.SplitN(w.ok("spawn", "--wait", "mine"), "\n", 2)[0])
	told(mine) // spawn --wait tells of what it waited for, as wait does
	if m := w.show(mine).Model; m != "personal-model" {
		t.Fatalf("model %q; want the personal default", m)
	}

	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[adapters.codex]\nmodel = \"project-model\"\n")
	theirs := w.spawn("theirs")
	w.ok("wait", theirs)
	told(theirs) // the project's file sets no [notify]: the person's holds
	if m := w.show(theirs).Model; m != "project-model" {
		t.Fatalf("model %q; want the project's, which wins", m)
	}

	// [trust] is the person's alone.
	writeFile(t, filepath.Join(w.State, "config.toml"), "[trust]\ndirs = [\"*\"]\n")
	if r := w.zwarm("spawn", "trusting"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "unknown key trust") {
		t.Errorf("[trust] in the project's file: exit %d, %s", r.code, r.stderr)
	}
	os.Remove(filepath.Join(w.State, "config.toml"))

	os.Chmod(personal, 0o666)
	if r := w.zwarm("spawn", "refused"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, personal) || !strings.Contains(r.stderr, "writable by you alone") {
		t.Errorf("a personal config others may write: exit %d, %s", r.code, r.stderr)
	}
}
