package watchers

import (
	"github.com/zwarm/zwarm/sessions/config"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func loadConfig(t *testing.T, body string) (*Config, string, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, config.File)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(dir, ConfigSection())
	if err != nil {
		return nil, path, err
	}
	return FromConfig(cfg), path, nil
}

func TestConfigTables(t *testing.T) {
	c, _, err := loadConfig(t, `
[watchers]
timeout = "2s"
[watchers.progress]
repeats = 4
abort_repeats = 0
[watchers.stall]
after = "15m"
first_event = "90s"
[watchers.scope]
keywords = ["kubernetes"]
[[watchers.pattern.rules]]
regex = 'rm -rf /'
action = "abort"
message = "no"
in = "outputs"
[watchers.llm]
enabled = true
every = 3
model = "gpt-5.1-codex-mini"
on_problem = "pause"
[watchers.cost_guard]
max_tokens = 2000000
priority = 99
[watchers.hollow]
enabled = false
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Timeout.Duration != 2*time.Second || c.Progress.Repeats != 4 || c.Progress.AbortRepeats != 0 || !c.Progress.Enabled ||
		c.Progress.EmptyWaits != DefaultEmptyWaits || c.Stall.After.Duration != 15*time.Minute || c.Stall.FirstEvent.Duration != 90*time.Second ||
		c.Scope.Keywords[0] != "kubernetes" || len(c.Pattern.Rules) != 1 || c.Pattern.Rules[0].Action != Abort || !c.Pattern.Rules[0].Regex.MatchString("sudo rm -rf /") ||
		!c.LLM.Enabled || c.LLM.Every != 3 || c.LLM.OnProblem != Pause || c.LLM.OnConcern != Nudge ||
		c.CostGuard.MaxTokens != 2_000_000 || c.CostGuard.Priority != 99 || !c.CostGuard.Enabled || c.Hollow.Enabled {
		t.Errorf("config %+v", c)
	}
	// Without the file, the defaults.
	none, _, _ := loadConfig(t, "")
	if !reflect.DeepEqual(none, DefaultConfig()) {
		t.Errorf("empty config: %+v", none)
	}
}

func TestConfigErrorsNameTheKeyAndFile(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"[watchers.progress]\nrepeat = 5\n", "unknown key watchers.progress.repeat"},
		{"[watchers.stalls]\nafter = \"1m\"\n", "unknown key watchers.stalls"},
		{"[watchers]\nstall_after = \"1m\"\n", "unknown key watchers.stall_after"},
		{"[watchers.stall]\nafter = \"ten minutes\"\n", "want a duration"},
		{"[[watchers.pattern.rules]]\nregex = '(['\naction = \"nudge\"\n", "regex \"([\": error parsing regexp"},
		{"[[watchers.pattern.rules]]\nregex = 'x'\naction = \"explode\"\n", `action "explode" is not one of continue, nudge, pause, abort`},
	} {
		_, path, err := loadConfig(t, c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: %v; want %q and the file", c.body, err, c.want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{"[watchers.progress]\nrepeats = 1\n", "progress.repeats is 1: it must be at least 2"},
		{"[watchers.progress]\nrepeats = 6\nabort_repeats = 6\n", "progress.abort_repeats (6) must be above repeats (6), or 0 for never"},
		{"[watchers.budget]\nwarn_at = 1.5\n", "budget.warn_at is 1.5"},
		{"[watchers.stall]\nafter = \"0s\"\n", "stall.after and stall.first_event must be positive"},
		{"[[watchers.pattern.rules]]\nregex = 'x'\n", "pattern.rules[0] (x) needs an action"},
		{"[[watchers.pattern.rules]]\nregex = 'x'\naction = \"nudge\"\nin = \"code\"\n", `in = "code"`},
		{"[watchers.cost_guard]\nmax_cost = -1.0\n", "cannot be negative"},
	} {
		cfg, _, err := loadConfig(t, c.body)
		if err != nil {
			t.Fatalf("%q: %v", c.body, err)
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "[watchers]: ") {
			t.Errorf("%q: %v; want %q", c.body, err, c.want)
		}
	}
}

// The example in .zwarm-example loads, validates, and says the defaults.
func TestExampleConfigLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", ".zwarm-example", "watchers.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := loadConfig(t, string(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, DefaultConfig()) {
		t.Errorf("the example's values are not the defaults:\n%+v\n%+v", c, DefaultConfig())
	}
}
