package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
)

// The installed binary says what it is: its module version, and the
// revision when the Go toolchain recorded one (a build in a git clone).
func TestVersionSaysWhatWasBuilt(t *testing.T) {
	w := newWorld(t)
	for _, arg := range []string{"version", "--version"} {
		if out := w.ok(arg); !strings.HasPrefix(out, "zwarm ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("zwarm %s: %q", arg, out)
		}
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "v0.3.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "288046a1b2c3d4e5f6"}, {Key: "vcs.time", Value: "2026-11-23T00:34:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "v0.3.0, revision 288046a1b2c3 of 2026-11-23 with local changes, go1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH
	if got := formatVersion(bi); got != want {
		t.Errorf("formatVersion = %q, want %q", got, want)
	}
}

// The state dir is found as git finds .git: the nearest .zwarm above the
// working directory; ZWARM_STATE_DIR and --state-dir win. zwarm init makes
// one (which ignores itself in git, leaving the repository clean);
// commands that only read never make one.
func TestStateDirIsFoundAboveAndMadeOnlyByInit(t *testing.T) {
	w := newWorld(t)
	w.gitEnv()
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	deep := filepath.Join(proj, "sub", "dir")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, ".gitignore"), "/bin")
	w.git(proj, "init", "-q")
	w.git(proj, "add", "-A")
	w.git(proj, "commit", "-q", "-m", "init")
	if r := w.zwarmIn(proj, nil, "init"); r.code != 0 || !strings.Contains(r.stdout, "made "+filepath.Join(proj, ".zwarm")) {
		t.Fatalf("init: %+v", r)
	}
	if r := w.zwarmIn(proj, nil, "init"); r.code != 0 || !strings.Contains(r.stdout, "already has a config.toml") {
		t.Fatalf("init again: %+v", r)
	}
	if cfg, _ := os.ReadFile(filepath.Join(proj, ".zwarm", "config.toml")); !bytes.Equal(cfg, exampleConfig) {
		t.Fatalf("config.toml is not the example:\n%s", cfg)
	}
	if ign, _ := os.ReadFile(filepath.Join(proj, ".gitignore")); string(ign) != "/bin" {
		t.Fatalf("init edited the repository's .gitignore:\n%s", ign)
	}
	if st := w.git(proj, "status", "--porcelain"); st != "" {
		t.Fatalf("the state dir dirties the repository: %q", st)
	}

	id := strings.TrimSpace(w.zwarmIn(deep, nil, "spawn", "--in-place", "from deep down").stdout)
	if _, err := os.Stat(filepath.Join(proj, ".zwarm", "sessions", id)); err != nil {
		t.Fatalf("spawn from a subdirectory did not use the project's state dir: %v", err)
	}
	if r := w.zwarmIn(deep, nil, "ls"); !strings.Contains(r.stdout, id) {
		t.Fatalf("ls in a subdirectory: %+v", r)
	}
	other := filepath.Join(root, "other")
	if r := w.zwarmIn(deep, []string{"ZWARM_STATE_DIR=" + other}, "ls"); strings.Contains(r.stdout, id) || !strings.Contains(r.stderr, other) {
		t.Fatalf("ZWARM_STATE_DIR does not win: %+v", r)
	}
	if r := w.zwarmIn(deep, []string{"ZWARM_STATE_DIR=" + other}, "--state-dir", filepath.Join(proj, ".zwarm"), "ls"); !strings.Contains(r.stdout, id) {
		t.Fatalf("--state-dir does not win: %+v", r)
	}
	w.zwarmIn(deep, nil, "wait", id)

	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o700)
	for _, args := range [][]string{{"ls"}, {"ls", "--json"}, {"show", "abc"}, {"logs", "abc"}, {"wait", "abc"}, {"kill", "--all"}, {"clean"}, {"doctor"}} {
		w.zwarmIn(empty, nil, args...)
	}
	cmd := exec.Command(bins.zwarm, "dash")
	cmd.Dir = empty
	w.dashQuit(cmd)
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Fatalf("read-only commands made %v", ents)
	}
}

// dashQuit runs the dashboard on a terminal and quits it.
func (w *world) dashQuit(cmd *exec.Cmd) {
	w.t.Helper()
	for _, e := range w.env() {
		if !strings.HasPrefix(e, "ZWARM_STATE_DIR=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "TERM=tmux-256color")
	dashOnTerminal(w.t, cmd, "q")
}

// The example config in the repository is the one zwarm init writes.
func TestInitWritesTheRepositoryExample(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, ".zwarm-example", "config.toml"))
	if err != nil || !bytes.Equal(want, exampleConfig) {
		t.Fatalf("cmd/zwarm/config.example.toml differs from .zwarm-example/config.toml (%v): copy it over", err)
	}
}

// A compiled zwarm must never be committed again.
func TestNoBuiltBinaryIsTracked(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "--", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(out)) {
		if f == "zwarm" || strings.HasSuffix(f, ".test") {
			t.Errorf("%s is tracked: build output stays out of git", f)
		}
	}
	if err := exec.Command("git", "check-ignore", "-q", "zwarm").Run(); err != nil {
		t.Errorf("cmd/zwarm/zwarm is not ignored: %v", err)
	}
}

// init makes no config.toml through a symlink: a dangling one is named as
// a symlink (not "file exists"), and what it points to is not made.
func TestInitWritesNoConfigThroughASymlink(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(w.State, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.toml")
	cfg := filepath.Join(w.State, "config.toml")
	if err := os.Symlink(target, cfg); err != nil {
		t.Fatal(err)
	}
	r := w.zwarm("init")
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, cfg+" is a symlink") || strings.Contains(r.stderr, "file exists") {
		t.Errorf("init with a dangling config.toml symlink: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("init made %s through the symlink", target)
	}
}

// Several zwarm init at once in a new directory all succeed, as one after
// another do: one makes config.toml, the others find it. One of two
// failed with "open …/config.toml: file exists".
func TestInitsAtOnceAllSucceed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rs := make([]result, 16)
	var wg sync.WaitGroup
	for i := range rs {
		wg.Add(1)
		go func() { defer wg.Done(); rs[i] = w.zwarm("init") }()
	}
	wg.Wait()
	made := 0
	for _, r := range rs {
		if r.code != 0 {
			t.Errorf("init, 16 at once: exit %d, stderr %q", r.code, r.stderr)
		}
		if strings.HasPrefix(r.stdout, "made ") {
			made++
		}
	}
	if got, err := os.ReadFile(filepath.Join(w.State, "config.toml")); made != 1 || err != nil || !bytes.Equal(got, exampleConfig) {
		t.Errorf("%d inits said they made config.toml; it holds %d bytes of the example's %d (%v)", made, len(got), len(exampleConfig), err)
	}
}
