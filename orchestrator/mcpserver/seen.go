package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/zwarm/zwarm/orchestrator/tools"
)

// SeenFile is where the MCP servers of a state dir keep what their
// clients have been shown of each worker (tools.Seen), in the state dir:
// a new conversation does not take every worker that finished before it
// for news, and one that finished while no server ran still is.
const SeenFile = "mcp-seen.json"

// seenKept is how long a worker shown stays remembered.
const seenKept = 30 * 24 * time.Hour

// loadSeen reads path's snapshot; a missing or unreadable file is none.
func loadSeen(path string) map[string]time.Time {
	var m map[string]time.Time
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &m)
	}
	return m
}

// saveSeen merges seen into path, each worker's latest end shown kept
// (another server may have shown it too), and drops what is older than
// seenKept. It is written whole, by rename: a reader never finds it half
// written. Two servers saving at once may each lose the other's latest
// marks: a worker is then news once more, no more.
func saveSeen(path string, seen *tools.Seen) error {
	m := loadSeen(path)
	if m == nil {
		m = map[string]time.Time{}
	}
	for id, at := range seen.Snapshot() {
		if at.After(m[id]) {
			m[id] = at
		}
	}
	cutoff := time.Now().Add(-seenKept)
	for id, at := range m {
		if at.Before(cutoff) {
			delete(m, id)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
