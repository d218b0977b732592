package testworld

import (
	"os"
	"path/filepath"
	"strings"
)

// GitEnv writes a git config of the tests' own under dir (an identity for
// commits, main as the first branch) and returns the environment that
// makes git use it and no system config, with worktrees made under dir
// (XDG_DATA_HOME), each under a name of its repository's.
func GitEnv(dir string) ([]string, error) {
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		return nil, err
	}
	return []string{"GIT_CONFIG_GLOBAL=" + cfg, "GIT_CONFIG_NOSYSTEM=1", "XDG_DATA_HOME=" + filepath.Join(dir, "data")}, nil
}

// Setenv keeps the machine's person out of every process of a test
// binary, under dir, once in its TestMain (so that tests need no t.Setenv
// and may run in parallel): git as GitEnv has it, a person's config dir
// that holds nothing (XDG_CONFIG_HOME), and a home of its own. A shell the
// tests start would otherwise run the machine's dotfiles, which may do
// slow set-up of their own (a version manager's shims) that a shell killed
// halfway, as tests do, leaves locked for every later shell.
func Setenv(dir string) error {
	env, err := GitEnv(dir)
	if err != nil {
		return err
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	for _, kv := range append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(dir, "config")) {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}
