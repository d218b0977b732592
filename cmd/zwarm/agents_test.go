package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The agent CLIs the end-to-end tests drive, at the versions this project
// was checked against. They are installed from the npm registry into
// .tools/agents (git-ignored) the first time a test needs them.
var agentPackages = map[string]string{
	"@openai/codex":             "0.169.0",
	"@anthropic-ai/claude-code": "2.1.197",
}

var agents struct {
	once          sync.Once
	codex, claude string
	err           error
}

// realAgents returns the paths of the real codex and claude binaries. If
// they cannot be installed, the test is skipped, except in CI (CI=true),
// where that is a failure: CI must run these tests.
func realAgents(t *testing.T) (codex, claude string) {
	t.Helper()
	agents.once.Do(func() { agents.codex, agents.claude, agents.err = installAgents() })
	if agents.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real agent CLIs unavailable: %v", agents.err)
		}
		t.Skipf("real agent CLIs unavailable (CI=true makes this a failure): %v", agents.err)
	}
	return agents.codex, agents.claude
}

func installAgents() (codex, claude string, err error) {
	root, err := repoRoot()
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(root, ".tools", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	// Several test binaries may install at once: one does, the others wait.
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", "", err
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)

	var missing []string
	for pkg, version := range agentPackages {
		if installedVersion(dir, pkg) != version {
			missing = append(missing, pkg+"@"+version)
		}
	}
	if len(missing) > 0 {
		npm, err := exec.LookPath("npm")
		if err != nil {
			return "", "", fmt.Errorf("npm not found: install Node.js and npm to run the end-to-end tests")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir}, missing...)
		if out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("npm install %v: %v\n%s", missing, err, out)
		}
		for pkg, version := range agentPackages {
			if got := installedVersion(dir, pkg); got != version {
				return "", "", fmt.Errorf("after npm install, %s is %q, want %s", pkg, got, version)
			}
		}
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	codex, claude = filepath.Join(bin, "codex"), filepath.Join(bin, "claude")
	for _, b := range []string{codex, claude} {
		if _, err := os.Stat(b); err != nil {
			return "", "", fmt.Errorf("agent binary missing after install: %w", err)
		}
	}
	return codex, claude, nil
}

func installedVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var p struct{ Version string }
	json.Unmarshal(b, &p)
	return p.Version
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the test's directory")
		}
		dir = parent
	}
}
