package codex

import (
	"errors"
	"github.com/zwarm/zwarm/sessions/config"
	"os"
	"path/filepath"
	"testing"
)

// codex.toml's overrides become codex's arguments: one that others may
// write is not read.
func TestAnUntrustedCodexTOMLIsNotRead(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := writeCodexTOML(t, "model = \"m\"\n")
	os.Chmod(filepath.Join(dir, ConfigFile), 0o666)
	var ue *config.UntrustedError
	if _, err := LoadOverrides(dir); !errors.As(err, &ue) || ue.Path != filepath.Join(dir, ConfigFile) {
		t.Fatalf("a codex.toml anyone may write: %v", err)
	}
}
