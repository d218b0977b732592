package adapters

import (
	"strings"
	"testing"

	"github.com/zwarm/zwarm/adapters/replay"
)

// The demo's replay player is not offered to users, but it still runs.
func TestReplayIsInternal(t *testing.T) {
	r := Builtin()
	if got := strings.Join(r.Names(), ","); got != "claude,codex" {
		t.Fatalf("Names() = %s", got)
	}
	if _, err := r.Lookup(replay.Name); err != nil {
		t.Fatalf("replay must still be found: %v", err)
	}
	_, err := r.Lookup("gemini")
	if err == nil || strings.Contains(err.Error(), "replay") || !strings.Contains(err.Error(), "claude, codex") {
		t.Fatalf("unknown adapter error: %v", err)
	}
}
