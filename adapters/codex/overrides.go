package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/zwarm/zwarm/sessions/config"
)

// ConfigFile holds codex settings passed through as `-c key=value`.
const ConfigFile = "codex.toml"

// Overrides is codex.toml: the keys zwarm handles itself, and everything
// else as codex `-c` overrides.
type Overrides struct {
	// Model and FullDanger are zwarm's own keys (as in the Python zwarm).
	Model      string
	FullDanger bool
	// Flags are key=value pairs, nested tables flattened to dotted keys and
	// values written as TOML literals, in key order.
	Flags []string
	// WritableRoots is codex's sandbox_workspace_write.writable_roots, kept
	// apart so that zwarm can add the dirs a worktree's git needs to it
	// rather than replace it.
	WritableRoots []string
}

// writableRootsKey is codex's list of extra writable dirs.
const writableRootsKey = "sandbox_workspace_write.writable_roots"

// LoadOverrides reads codex.toml from the state dir; a missing file is empty.
func LoadOverrides(stateDir string) (Overrides, error) {
	if err := config.CheckTrusted(stateDir); err != nil {
		return Overrides{}, err // its args would be run
	}
	path := filepath.Join(stateDir, ConfigFile)
	var doc map[string]any
	_, err := toml.DecodeFile(path, &doc)
	if errors.Is(err, fs.ErrNotExist) {
		return Overrides{}, nil
	}
	if err != nil {
		return Overrides{}, &config.Error{Path: path, Err: err}
	}
	var o Overrides
	if v, ok := doc["model"]; ok {
		s, ok := v.(string)
		if !ok {
			return Overrides{}, &config.Error{Path: path, Err: errors.New("model must be a string")}
		}
		o.Model = s
		delete(doc, "model")
	}
	if v, ok := doc["full_danger"]; ok {
		b, ok := v.(bool)
		if !ok {
			return Overrides{}, &config.Error{Path: path, Err: errors.New("full_danger must be true or false")}
		}
		o.FullDanger = b
		delete(doc, "full_danger")
	}
	flat := map[string]any{}
	if err := flatten("", doc, flat); err != nil {
		return Overrides{}, &config.Error{Path: path, Err: err}
	}
	if v, ok := flat[writableRootsKey]; ok {
		list, ok := v.([]any)
		for _, e := range list {
			s, isStr := e.(string)
			if !isStr {
				ok = false
				break
			}
			o.WritableRoots = append(o.WritableRoots, s)
		}
		if !ok {
			return Overrides{}, &config.Error{Path: path, Err: fmt.Errorf("%s must be a list of paths", writableRootsKey)}
		}
		delete(flat, writableRootsKey)
	}
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lit, err := literal(flat[k])
		if err != nil {
			return Overrides{}, &config.Error{Path: path, Err: fmt.Errorf("%s: %w", k, err)}
		}
		o.Flags = append(o.Flags, k+"="+lit)
	}
	return o, nil
}

// flatten turns nested tables, at any depth, into dotted keys. Codex splits
// a -c key on every dot and takes each piece literally (quotes included),
// so a key with spaces is passed as it is ("model_providers.my p.name"
// reaches the table "my p"), and a key with a dot in it cannot be passed at
// all: that is an error, not a silently different key.
func flatten(prefix string, m map[string]any, out map[string]any) error {
	for k, v := range m {
		if strings.Contains(k, ".") {
			return fmt.Errorf("key %q has a dot in it, which codex's -c overrides cannot express; put it in codex's own config.toml instead", k)
		}
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			if err := flatten(key, sub, out); err != nil {
				return err
			}
			continue
		}
		out[key] = v
	}
	return nil
}

// literal writes a value the way codex parses `-c` values: as TOML.
func literal(v any) (string, error) {
	switch x := v.(type) {
	case string:
		// A JSON string is a valid TOML basic string.
		b, err := json.Marshal(x)
		return string(b), err
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "inf", nil
		case math.IsInf(x, -1):
			return "-inf", nil
		case math.IsNaN(x):
			return "nan", nil
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s, nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := literal(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case []map[string]any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := literal(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			s, err := literal(x[k])
			if err != nil {
				return "", err
			}
			parts[i] = k + " = " + s
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	}
	return "", fmt.Errorf("unsupported value %T", v)
}
