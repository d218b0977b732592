package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(body), 0o600); err != nil {
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
	c, err := LoadConfig(dir)
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
	_, err := LoadConfig(dir)
	if err == nil || !strings.Contains(err.Error(), "adapters.codex.modle") || !strings.Contains(err.Error(), filepath.Join(dir, ConfigFile)) {
		t.Fatalf("got %v", err)
	}
	if _, err := LoadConfig(writeConfig(t, `kill_grace = "soon"`)); err == nil || !strings.Contains(err.Error(), "duration") {
		t.Fatalf("bad duration: %v", err)
	}
	c, err := LoadConfig(t.TempDir())
	if err != nil || c.Grace() != DefaultKillGrace {
		t.Fatalf("missing file: %v %v", c, err)
	}
}

// The example state dir in the repository must load: a README example that
// does not work is worse than none.
func TestExampleConfigLoads(t *testing.T) {
	c, err := LoadConfig("../.zwarm-example")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckAdapters("../.zwarm-example", []string{"codex", "claude"}); err != nil {
		t.Fatal(err)
	}
}
