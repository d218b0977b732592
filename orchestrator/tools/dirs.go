package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Dirs confines working directories to a base directory and any allowed
// others, with their subdirectories. Symbolic links are resolved first, so
// a link cannot lead outside.
type Dirs struct {
	Base    string
	Allowed []string
}

// Resolve turns a requested directory (absolute, or relative to Base; ""
// is Base) into an existing absolute directory inside the confinement.
func (d Dirs) Resolve(dir string) (string, error) {
	abs := dir
	if dir == "" {
		abs = d.Base
	} else if !filepath.IsAbs(dir) {
		abs = filepath.Join(d.Base, dir)
	}
	abs = filepath.Clean(abs)
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("working dir %s does not exist: pass an existing directory, absolute or relative to %s", abs, d.Base)
	}
	if err != nil {
		return "", fmt.Errorf("working dir %s: %w", abs, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("working dir %s is not a directory", abs)
	}
	for _, root := range append([]string{d.Base}, d.Allowed...) {
		if within(real, root) {
			return abs, nil
		}
	}
	allowed := d.Base
	if len(d.Allowed) > 0 {
		allowed += " or " + strings.Join(d.Allowed, ", ")
	}
	return "", fmt.Errorf("working dir %s is outside the allowed directories (%s and below): pass a directory under them, or ask the user to add it to allowed_dirs in the [orchestrator] table of config.toml", abs, allowed)
}

// within reports whether path is root or below it, both resolved.
func within(path, root string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		r = filepath.Clean(root)
	}
	rel, err := filepath.Rel(r, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
