package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// FindBinary locates an agent's executable for adapters: the environment
// variable env if set, then the configured path, then name on PATH. A
// missing binary is an error that says where the name came from and how to
// install it.
func FindBinary(name, env, configured, install string) (string, error) {
	bin, from := name, "PATH"
	if v := os.Getenv(env); v != "" {
		bin, from = v, env
	} else if configured != "" {
		bin, from = configured, "config.toml [adapters."+name+"] binary"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s binary %q (from %s) not found: install it with `%s`, or point %s at it", name, bin, from, install, env)
		}
		return "", fmt.Errorf("%s binary %q (from %s): %w", name, bin, from, err)
	}
	return path, nil
}

// CompactJSON renders a JSON value on one line, "" for null or nothing.
func CompactJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// ContentText reads a content value as the model APIs write it (a
// message's content, a call's output, a tool result's content): a string,
// or an array of parts whose texts are joined by newlines, empty ones left
// out.
func ContentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}
