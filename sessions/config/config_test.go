package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/store"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, File), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadConfig(t *testing.T) {
	dir := writeConfig(t, `
default_adapter = "codex"
kill_grace = "2s"
[adapters.codex]
model = "gpt-5.1-codex"
binary = "/opt/codex"
sandbox = "danger-full-access"
[prices."my-model"]
input = 1.0
cached_input = 0.1
output = 2.0
`)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Grace() != 2*time.Second || c.Adapter("codex").Model != "gpt-5.1-codex" || c.Adapter("codex").Binary != "/opt/codex" {
		t.Fatalf("%+v", c)
	}
	if _, ok := c.PriceTable().Lookup("my-model"); !ok {
		t.Fatal("configured price missing")
	}
	if err := c.CheckAdapters(dir, []string{"codex"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckAdapters(dir, []string{"claude"}); err == nil {
		t.Fatal("unknown adapter accepted")
	}
}

func TestLoadConfigUnknownKeyNamesKeyAndFile(t *testing.T) {
	dir := writeConfig(t, "[adapters.codex]\nmodle = \"x\"\n")
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "adapters.codex.modle") || !strings.Contains(err.Error(), filepath.Join(dir, File)) {
		t.Fatalf("got %v", err)
	}
	if _, err := Load(writeConfig(t, `kill_grace = "soon"`)); err == nil || !strings.Contains(err.Error(), "duration") {
		t.Fatalf("bad duration: %v", err)
	}
	c, err := Load(t.TempDir())
	if err != nil || c.Grace() != DefaultKillGrace {
		t.Fatalf("missing file: %v %v", c, err)
	}
}

// The example state dir in the repository must load: a README example that
// does not work is worse than none.
func TestExampleConfigLoads(t *testing.T) {
	c, err := Load("../../.zwarm-example")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckAdapters("../../.zwarm-example", []string{"codex", "claude"}); err != nil {
		t.Fatal(err)
	}
}

// Tables other packages own are decoded into their types, as strictly as
// zwarm's own keys: a typo anywhere names the key and the file.
func TestConfigSectionsAndTypos(t *testing.T) {
	type orch struct {
		Model    string `toml:"model"`
		MaxSteps int    `toml:"max_steps"`
	}
	sec := Section{Name: "orchestrator", New: func() any { return &orch{MaxSteps: 50} }, Keys: "model, max_steps"}
	c, err := Load(writeConfig(t, "[orchestrator]\nmodel = \"gpt-5.5\"\n"), sec)
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Section("orchestrator").(*orch); o.Model != "gpt-5.5" || o.MaxSteps != 50 {
		t.Fatalf("section %+v", o)
	}
	if c, _ := Load(t.TempDir(), sec); c.Section("orchestrator").(*orch).MaxSteps != 50 {
		t.Fatal("a missing file does not give the section's defaults")
	}
	for body, want := range map[string]string{
		"modle = \"x\"\n":                        "modle",
		"[orchestrator]\nmax_stpes = 3\n":        "orchestrator.max_stpes",
		"[orchestrater]\nmodel = \"x\"\n":        "orchestrater",
		"[adapters.codex]\nmodle = \"x\"\n":      "adapters.codex.modle",
		"[orchestrator]\nmax_steps = \"many\"\n": "max_steps",
	} {
		_, err := Load(writeConfig(t, body), sec)
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), File) {
			t.Errorf("%q: want a config error naming %q, got %v", body, want, err)
		}
	}
}

func TestWorktreesConfig(t *testing.T) {
	c, err := Load(writeConfig(t, "[worktrees]\nisolation = \"none\"\ndir = \"~/wt\"\ncopy = [\".env\"]\nsymlink = [\"node_modules\"]\nsetup = \"npm ci\"\nverify_writable = [\"~/.cache/bazel\", \"/srv/fixtures\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	if root, err := c.Worktrees.Root(); err != nil || root != filepath.Join(home, "wt") || c.Worktrees.Isolation != IsolationNone ||
		c.Worktrees.Setup != "npm ci" || c.Worktrees.Copy[0] != ".env" || c.Worktrees.Symlink[0] != "node_modules" {
		t.Fatalf("%+v %q %v", c.Worktrees, root, err)
	}
	if got := c.Worktrees.VerifyDirs(); len(got) != 2 || got[0] != filepath.Join(home, ".cache/bazel") || got[1] != "/srv/fixtures" {
		t.Errorf("verify dirs %q", got)
	}
	for body, want := range map[string]string{
		"[worktrees]\nisolation = \"bubble\"\n":        `isolation = "bubble"`,
		"[worktrees]\ndir = \"rel/dir\"\n":             "want an absolute path",
		"[worktrees]\nverify_writable = [\"cache\"]\n": `verify_writable = [..., "cache", ...]: want absolute paths`,
		"[worktrees]\ncopie = [\"x\"]\n":               "worktrees.copie",
	} {
		if _, err := Load(writeConfig(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// [state] locks chooses the state dir's lock scheme: the session locks
// of a state dir that says "lease" are lease files, there only while held.
func TestStateLocksConfig(t *testing.T) {
	t.Setenv(store.LocksEnv, "")
	dir := writeConfig(t, "[state]\nlocks = \"lease\"\n")
	c, err := Load(dir)
	if err != nil || c.State.Locks != "lease" {
		t.Fatalf("%+v, %v", c, err)
	}
	for body, want := range map[string]string{
		"[state]\nlocks = \"nfs\"\n": `[state] locks = "nfs": want "flock", "lease" or "auto"`,
		"[state]\nlokcs = \"x\"\n":   "unknown key state.lokcs (known: [state] locks)",
	} {
		if _, err := Load(writeConfig(t, body)); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), File) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// A value of the wrong kind is said in the file's own terms, with its
// line and key, never in the decoder's Go types.
func TestAValueOfTheWrongKindIsSaidInTheFilesTerms(t *testing.T) {
	for body, want := range map[string]string{
		"[worktrees]\ncopy = \".env\"\n":      `line 2: worktrees.copy is a string, want a list (["...", "..."])`,
		"[adapters.codex]\nmodel = 5\n":       `line 2: adapters.codex.model is a whole number, want a string ("...")`,
		"[worktrees]\nsetup = [\"npm ci\"]\n": `line 2: worktrees.setup is a list, want a string ("...")`,
		"default_adapter = true\n":            `line 1: default_adapter is true or false, want a string ("...")`,
	} {
		_, err := Load(writeConfig(t, body))
		if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "destination") {
			t.Errorf("%q: %v\nwant it to end %s", body, err, want)
		}
	}
}
