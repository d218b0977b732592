package codex

import (
	"testing"

	"github.com/zwarm/zwarm/sessions/agent"
)

// workspace-write reaches /tmp and $TMPDIR unless codex.toml excludes them,
// and its writable_roots; read-only reaches nothing more.
func TestWhatWorkspaceWriteReaches(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	work := t.TempDir()
	dirs := func(body, sandbox string) []string {
		state := writeCodexTOML(t, body)
		t.Setenv("TMPDIR", "/var/tmp/mine")
		defer t.Setenv("TMPDIR", work)
		var out []string
		for _, r := range New().Reaches(agent.TurnRequest{StateDir: state, Sandbox: sandbox, WorkingDir: work}) {
			if r.Remedy == "" {
				t.Errorf("%s: no remedy", r.Dir)
			}
			out = append(out, r.Dir)
		}
		return out
	}
	for _, c := range []struct {
		body, sandbox string
		want          []string
	}{
		{"", "", []string{"/tmp", "/var/tmp/mine"}},
		{"[sandbox_workspace_write]\nexclude_slash_tmp = true\n", "", []string{"/var/tmp/mine"}},
		{"[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\nwritable_roots = [\"/srv/shared\"]\n", "", []string{"/srv/shared"}},
		{"", SandboxReadOnly, nil},
	} {
		got := dirs(c.body, c.sandbox)
		if len(got) != len(c.want) {
			t.Errorf("%q %s: %v, want %v", c.body, c.sandbox, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q %s: %v, want %v", c.body, c.sandbox, got, c.want)
			}
		}
	}
}
