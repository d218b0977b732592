package claude

import (
	"errors"
	"github.com/zwarm/zwarm/sessions/config"
	"os"
	"path/filepath"
	"testing"
)

// claude.toml's args are claude's arguments: one that others may write is
// not read.
func TestAnUntrustedClaudeTOMLIsNotRead(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := stateWith(t, "args = [\"--x\"]\n")
	os.Chmod(filepath.Join(dir, ConfigFile), 0o666)
	var ue *config.UntrustedError
	if _, err := LoadSettings(dir); !errors.As(err, &ue) || ue.Path != filepath.Join(dir, ConfigFile) {
		t.Fatalf("a claude.toml anyone may write: %v", err)
	}
}
