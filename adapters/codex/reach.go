package codex

import (
	"os"
	"slices"

	"github.com/zwarm/zwarm/sessions/agent"
)

var _ agent.Reacher = (*Adapter)(nil)

// Reaches lists what workspace-write lets codex write besides its
// working dir and the git dirs zwarm names: /tmp and $TMPDIR, unless
// codex.toml excludes them, and codex.toml's writable_roots. The other
// modes reach nothing more (read-only) or everything
// (danger-full-access, which the person chose by name).
func (a *Adapter) Reaches(req agent.TurnRequest) []agent.Reach {
	_, ov, sandbox, err := a.setup(req)
	if err != nil || sandbox != SandboxWorkspaceWrite {
		return nil
	}
	var out []agent.Reach
	if !slices.Contains(ov.Flags, "sandbox_workspace_write.exclude_slash_tmp=true") {
		out = append(out, agent.Reach{Dir: "/tmp", Remedy: "set exclude_slash_tmp = true under [sandbox_workspace_write] in " + ConfigFile})
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" && !slices.Contains(ov.Flags, "sandbox_workspace_write.exclude_tmpdir_env_var=true") {
		out = append(out, agent.Reach{Dir: tmp, Remedy: "set exclude_tmpdir_env_var = true under [sandbox_workspace_write] in " + ConfigFile})
	}
	for _, root := range ov.WritableRoots {
		out = append(out, agent.Reach{Dir: root, Remedy: "take it out of writable_roots under [sandbox_workspace_write] in " + ConfigFile})
	}
	return out
}
