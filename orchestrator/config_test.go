package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/config"
)

func loadConfig(t *testing.T, body string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, config.File), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(dir, ConfigSection())
	if err != nil {
		return nil, err
	}
	return FromConfig(cfg), nil
}

func TestConfigTable(t *testing.T) {
	c, err := loadConfig(t, `
[orchestrator]
model = "gpt-5.1-codex"
max_steps = 80
max_cost = 2.5
max_tokens = 3000000
max_workers = 6
timeout = "90m"
allowed_dirs = ["/srv/other"]
adapter = "claude"
worker_model = "sonnet"
isolation = "none"
kill_workers_on_exit = true
context_window = 200000
compact_at = 0.9
compact_to = 0.5
retries = 5
retry_max_delay = "30s"
stream_retries = 1
request_timeout = "5m"
reasoning_effort = "high"
api_key_env = "MY_KEY"
base_url = "http://127.0.0.1:9/v1"
[orchestrator.context_windows]
"gpt-5.1" = 400000
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s := c.Settings("/w")
	want := Settings{Model: "gpt-5.1-codex", Dir: "/w", Limits: runs.Limits{MaxSteps: 80, MaxCostUSD: 2.5, MaxTokens: 3000000, MaxWorkers: 6,
		Timeout: config.Duration{Duration: 90 * time.Minute}}, AllowedDirs: []string{"/srv/other"}, Adapter: "claude", WorkerModel: "sonnet",
		KillWorkersOnExit: true, ReasoningEffort: "high", ContextWindow: 200000, CompactAt: 0.9, CompactTo: 0.5, StreamRetries: 1}
	if s.Model != want.Model || s.Limits != want.Limits || s.AllowedDirs[0] != "/srv/other" || s.Adapter != want.Adapter ||
		s.WorkerModel != want.WorkerModel || !s.KillWorkersOnExit || s.ReasoningEffort != "high" || s.ContextWindow != 200000 ||
		s.CompactAt != 0.9 || s.CompactTo != 0.5 || s.StreamRetries != 1 || s.Isolation != config.IsolationNone {
		t.Errorf("settings %+v", s)
	}
	if c.Window("gpt-5.1") != 400000 || c.Retries != 5 || c.RetryMaxDelay.Duration != 30*time.Second || c.APIKeyEnv != "MY_KEY" {
		t.Errorf("config %+v", c)
	}
}

func TestConfigDefaultsAndErrors(t *testing.T) {
	c, err := loadConfig(t, "")
	if err != nil || c.Model != DefaultModel || c.MaxSteps != 50 || c.Window("x") != DefaultContextWindow || c.Validate() != nil {
		t.Fatalf("defaults %+v %v", c, err)
	}
	if _, err := loadConfig(t, "[orchestrator]\nmax_step = 3\n"); err == nil || !strings.Contains(err.Error(), "unknown key orchestrator.max_step") ||
		!strings.Contains(err.Error(), "[orchestrator] model, base_url") {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := loadConfig(t, "[orchestrator]\ntimeout = \"soon\"\n"); err == nil || !strings.Contains(err.Error(), "duration") {
		t.Errorf("bad duration: %v", err)
	}
	c, _ = loadConfig(t, "[orchestrator]\nmax_steps = 0\ncompact_at = 0.5\ncompact_to = 0.7\nallowed_dirs = [\"rel\"]\nreasoning_effort = \"max\"\nisolation = \"container\"\n")
	err = c.Validate()
	for _, want := range []string{"max_steps is 0", "0 < compact_to < compact_at <= 1", `"rel" is not an absolute path`, `reasoning_effort "max"`,
		`isolation "container" is not "worktree" or "none"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate: %v lacks %q", err, want)
		}
	}
}
