package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// zwarm mcp logs to logs/zwarm.log, never through a symlink planted there.
func TestMCPDoesNotLogThroughASymlink(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.State, "logs"), 0o700)
	target := filepath.Join(t.TempDir(), "target")
	writeFile(t, target, "precious\n")
	link := filepath.Join(w.State, "logs", "zwarm.log")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	c := startMCP(t, w)
	code := c.exit(30 * time.Second)
	if code == 0 || !strings.Contains(c.stderr.String(), link+" is a symlink") {
		t.Errorf("exit %d, stderr %q", code, c.stderr.String())
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("the log went through the symlink: %q", b)
	}
}
