package claude

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/zwarm/zwarm/sessions/config"
)

// ConfigFile holds claude settings.
const ConfigFile = "claude.toml"

// Settings is claude.toml. Unknown keys are an error.
type Settings struct {
	// Model is used when neither spawn -m nor config.toml names one.
	Model string `toml:"model"`
	// FullDanger runs claude with --dangerously-skip-permissions.
	FullDanger bool `toml:"full_danger"`
	// PermissionMode is claude's --permission-mode (default acceptEdits).
	PermissionMode string `toml:"permission_mode"`
	// LiveInput (default true) keeps the worker's stdin open for
	// follow-ups; false passes the prompt as an argument instead.
	LiveInput *bool `toml:"live_input"`
	// Args are extra command-line arguments, e.g. ["--max-turns", "30"].
	Args []string `toml:"args"`
}

// LoadSettings reads claude.toml from the state dir; a missing file is empty.
func LoadSettings(stateDir string) (Settings, error) {
	if err := config.CheckTrusted(stateDir); err != nil {
		return Settings{}, err // its args would be run
	}
	path := filepath.Join(stateDir, ConfigFile)
	var s Settings
	md, err := toml.DecodeFile(path, &s)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, &config.Error{Path: path, Err: err}
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return Settings{}, &config.Error{Path: path, Err: fmt.Errorf("unknown key %s (known: model, full_danger, permission_mode, live_input, args)", strings.Join(keys, ", "))}
	}
	return s, nil
}
