package config

import (
	"errors"
	"strings"
)

// kindError says a value of the wrong kind in the config's own terms:
// "line 3: worktrees.copy is a string, want a list" where the TOML
// decoder names Go's types ("TOML value has type string; destination has
// type slice"). Any other error is returned as it is.
func kindError(err error) error {
	msg := err.Error()
	head, rest, ok := strings.Cut(msg, "incompatible types: TOML value has type ")
	if !ok {
		return err
	}
	got, want, ok := strings.Cut(rest, "; destination has type ")
	if !ok {
		return err
	}
	where := strings.TrimSuffix(strings.TrimPrefix(head, "toml: "), ": ")
	line, key := "", ""
	if l, k, ok := strings.Cut(where, " (last key "); ok {
		line, key = strings.TrimSpace(l), strings.Trim(strings.TrimSuffix(k, ")"), `"`)
	}
	if key == "" {
		return err
	}
	out := key + " is " + tomlKind(got) + ", want " + goKind(want)
	if line != "" {
		out = line + ": " + out
	}
	return errors.New(out)
}

// tomlKind names a decoded TOML value's type as the file writes it.
func tomlKind(t string) string {
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a table"
	case t == "time.Time":
		return "a date"
	}
	return t
}

// goKind names the kind of value a setting takes, as the file writes it.
func goKind(k string) string {
	switch {
	case k == "string":
		return `a string ("...")`
	case strings.HasPrefix(k, "int") || strings.HasPrefix(k, "uint"):
		return "a whole number"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "bool":
		return "true or false"
	case k == "slice" || k == "array":
		return `a list (["...", "..."])`
	case k == "map" || k == "struct":
		return "a table"
	}
	return k
}
