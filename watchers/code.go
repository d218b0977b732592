package watchers

import (
	"path"
	"strings"
)

// isSource reports whether p names a source file by its extension.
func isSource(p string, exts []string) bool {
	ext := strings.ToLower(path.Ext(p))
	if ext == "" {
		return false
	}
	for _, e := range exts {
		if strings.EqualFold(e, ext) {
			return true
		}
	}
	return false
}

// isTest reports whether p is a test: a pattern (a glob, as path.Match
// reads it) matches its base name or one of its directories.
func isTest(p string, patterns []string) bool {
	parts := strings.Split(strings.ReplaceAll(p, "\\", "/"), "/")
	for _, part := range parts {
		if part == "" {
			continue
		}
		for _, pat := range patterns {
			if ok, _ := path.Match(pat, part); ok {
				return true
			}
		}
	}
	return false
}
