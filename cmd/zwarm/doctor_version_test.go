package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// An agent that warns on stderr before printing its version on stdout (as
// codex does when it cannot make its helper binaries) is reported by its
// version, not by the warning; one that prints only on stderr still is.
func TestAgentVersionPrefersStdout(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{
		"warns":      "echo 'WARNING: proceeding, even though' >&2\necho 'codex-cli 0.169.0'\n",
		"stderrOnly": "echo 'codex-cli 0.169.0' >&2\n",
	} {
		bin := filepath.Join(dir, name)
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o700); err != nil {
			t.Fatal(err)
		}
		if got := agentVersion(context.Background(), bin); got != "codex-cli 0.169.0" {
			t.Errorf("%s: %q", name, got)
		}
	}
}
