package mcpserver

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

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

// The example in .zwarm-example loads, and says the defaults.
func TestMCPExampleConfigLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".zwarm-example", "mcp.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(t, string(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	def.AllowedDirs = []string{}
	if !reflect.DeepEqual(c, def) {
		t.Errorf("the example's values are not the defaults:\n%+v\n%+v", c, def)
	}
}

func TestMCPConfig(t *testing.T) {
	c, err := loadConfig(t, "[mcp]\nmax_workers = 2\nallowed_dirs = [\"/srv/repos\"]\nadapter = \"claude\"\nmodel = \"claude-sonnet-4-5\"\nwait_cap = \"40s\"\n")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{MaxWorkers: 2, AllowedDirs: []string{"/srv/repos"}, Adapter: "claude", Model: "claude-sonnet-4-5",
		WaitCap: config.Duration{Duration: 40 * time.Second}}
	if !reflect.DeepEqual(c, want) || c.Validate() != nil {
		t.Fatalf("got %+v (%v)", c, c.Validate())
	}
	// Without the file's table, the defaults.
	if c, err := loadConfig(t, ""); err != nil || !reflect.DeepEqual(c, DefaultConfig()) {
		t.Fatalf("no table: %+v %v", c, err)
	}
	if _, err := loadConfig(t, "[mcp]\nmax_worker = 2\n"); err == nil || !strings.Contains(err.Error(), "max_worker") ||
		!strings.Contains(err.Error(), ConfigKeys) {
		t.Errorf("a typo: %v", err)
	}
	for body, want := range map[string]string{
		"[mcp]\nmax_workers = -1\n":         "max_workers is -1",
		"[mcp]\nwait_cap = \"5s\"\n":        "wait_cap is 5s: it must be from 10s",
		"[mcp]\nwait_cap = \"2h\"\n":        "wait_cap is 2h0m0s: it must be from 10s (the shortest wait) to 1h0m0s",
		"[mcp]\nallowed_dirs = [\"rel\"]\n": `allowed_dirs entry "rel" is not an absolute path`,
	} {
		c, err := loadConfig(t, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "[mcp]") {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

func TestMCPAdapt(t *testing.T) {
	for in, want := range map[string]string{
		"call wait, then check_session":                                     "call wait, then show",
		"use an id that delegate or list_sessions returned":                 "use an id that spawn or list returned",
		"stop one (end_session); peek_session is cheap":                     "stop one (kill); show is cheap",
		"converse with it; a delegated task stays":                          "inject with it; a delegated task stays",
		"add it to allowed_dirs in the [orchestrator] table of config.toml": "add it to allowed_dirs in the [mcp] table of config.toml",
	} {
		if got := adapt(in); got != want {
			t.Errorf("adapt(%q) = %q, want %q", in, got, want)
		}
	}
}
