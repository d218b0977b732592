package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
)

// A state dir that is another user's, or that others may write, names no
// program zwarm runs: spawn and inject refuse it (exit 2, naming the path,
// its owner and how to trust it) before the configured binary runs; ls
// still lists its sessions; and once the user trusts it in their own
// config, it is used.
func TestAStateDirNotYoursRunsNothingUntilTrusted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	done := w.spawn("first")
	w.ok("wait", done)
	// From here the agent is the one config.toml names, as an attacker's
	// config would name theirs.
	userCfg := filepath.Join(t.TempDir(), "xdg")
	w.extraEnv = []string{"ZWARM_CODEX_BIN=", "XDG_CONFIG_HOME=" + userCfg}
	cfg := filepath.Join(w.State, "config.toml")
	writeFile(t, cfg, "[adapters.codex]\nbinary = \""+bins.fake+"\"\n")
	os.Chmod(cfg, 0o600)
	ran := len(w.Invocations())

	refused := func(what, path, why string, args ...string) {
		t.Helper()
		r := w.zwarm(args...)
		if r.code != cli.ExitUsage || !strings.Contains(r.stderr, path+" "+why) || !strings.Contains(r.stderr, "[trust]") ||
			!strings.Contains(r.stderr, filepath.Join(userCfg, "zwarm", "config.toml")) || !strings.Contains(r.stderr, `dirs = ["`+w.State+`"]`) {
			t.Errorf("%s: %v: exit %d, stderr %q", what, args, r.code, r.stderr)
		}
		if n := len(w.Invocations()); n != ran {
			t.Fatalf("%s: %v ran the configured agent", what, args)
		}
	}
	lists := func(what string) {
		t.Helper()
		r := w.zwarm("ls", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, done) {
			t.Errorf("%s: ls: exit %d, stdout %q, stderr %q", what, r.code, r.stdout, r.stderr)
		}
	}

	os.Chmod(cfg, 0o666)
	refused("a config anyone may write", cfg, "can be written by others", "spawn", "x")
	// doctor fails on it, says why once, and runs none of the agents the
	// config names (not even for their version).
	if r := w.zwarm("doctor"); r.code != cli.ExitFailure || strings.Count(r.stdout, "can be written by others") != 1 ||
		!strings.Contains(r.stdout, "not checked") || len(w.Invocations()) != ran {
		t.Errorf("doctor on an untrusted config: exit %d, stdout %q", r.code, r.stdout)
	}
	refused("a config anyone may write", cfg, "can be written by others", "inject", done, "more")
	lists("a config anyone may write")
	// ls warns with the refusal, its TOML ready to paste, and then says on
	// a line of its own what it does instead.
	if r := w.zwarm("ls"); r.code != 0 || !strings.Contains(r.stderr, `dirs = ["`+w.State+`"]`+"\n") ||
		!strings.Contains(r.stderr, "\nzwarm: stalls are marked with the default thresholds") {
		t.Errorf("ls on an untrusted config: exit %d, stderr %q", r.code, r.stderr)
	}
	os.Chmod(cfg, 0o600)

	os.Chmod(w.State, 0o777)
	refused("a state dir anyone may write", w.State, "can be written by others", "spawn", "x")
	os.Chmod(w.State, 0o700)

	if os.Geteuid() == 0 {
		// Root in another user's checkout: the case git's safe.directory is for.
		for _, p := range []string{w.State, cfg} {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		refused("another user's state dir", w.State, "is owned by", "spawn", "x")
		refused("another user's state dir", w.State, "is owned by", "inject", done, "more")
		r := w.zwarm("spawn", "x")
		if !strings.Contains(r.stderr, "uid 65534") {
			t.Errorf("the owner is not named: %q", r.stderr)
		}
		lists("another user's state dir")
		defer func() {
			os.Chown(w.State, 0, 0)
			os.Chown(cfg, 0, 0)
		}()
	}

	// Trusted in the user's own config: used as it is.
	os.Chmod(cfg, 0o666)
	os.MkdirAll(filepath.Join(userCfg, "zwarm"), 0o700)
	writeFile(t, filepath.Join(userCfg, "zwarm", "config.toml"), "[trust]\ndirs = [\""+w.State+"\"]\n")
	os.Chmod(filepath.Join(userCfg, "zwarm", "config.toml"), 0o600)
	id := w.spawn("trusted")
	w.ok("wait", "--timeout", (30 * time.Second).String(), id)
	if n := len(w.Invocations()); n != ran+1 {
		t.Fatalf("the trusted state dir's agent ran %d times", n-ran)
	}

	// A user config others may write trusts nothing.
	os.Chmod(filepath.Join(userCfg, "zwarm", "config.toml"), 0o666)
	r := w.zwarm("spawn", "x")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, filepath.Join(userCfg, "zwarm", "config.toml")) {
		t.Errorf("a user config anyone may write: exit %d, %q", r.code, r.stderr)
	}
}
