package slurm

import "testing"

// sinfo's node states, with the suffixes it adds, as check judges them.
func TestNodeUsable(t *testing.T) {
	for state, want := range map[string]bool{
		"idle": true, "mixed": true, "allocated": true, "completing": true,
		"allocated+": true, "mixed-": true, "idle~": true, "idle#": true,
		"idle*": false, "allocated*": false, "down": false, "drained": false,
		"draining": false, "down*": false, "unknown": false, "": false,
	} {
		if got := nodeUsable(state); got != want {
			t.Errorf("nodeUsable(%q) = %v, want %v", state, got, want)
		}
	}
}
