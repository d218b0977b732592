package codex

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/zwarm/zwarm/adapters/internal/agenthome"
	"github.com/zwarm/zwarm/sessions/agent"
)

var _ agent.ThreadFinder = (*Adapter)(nil)

// ThreadsSince lists the threads codex wrote in dir since since, other
// than not: their rollouts, sessions/YYYY/MM/DD/rollout-TIME-THREAD.jsonl
// under $CODEX_HOME (default ~/.codex), in the day dirs from since to now,
// written since then, whose session_meta names dir as their cwd.
func (a *Adapter) ThreadsSince(dir string, since time.Time, not string) []string {
	home := agenthome.Home("CODEX_HOME", ".codex")
	if home == "" {
		return nil
	}
	var days []string
	for d := since.Add(-24 * time.Hour); !d.After(time.Now().Add(24 * time.Hour)); d = d.Add(24 * time.Hour) {
		days = append(days, filepath.Join("sessions", d.Format("2006"), d.Format("01"), d.Format("02"), "rollout-*.jsonl"))
	}
	var out []string
	for _, path := range agenthome.WrittenSince(home, since, days...) {
		if id, cwd := rolloutMeta(path); id != "" && id != not && cwd == dir {
			out = append(out, id)
		}
	}
	return out
}

// rolloutMeta is the thread and working dir of a rollout's session_meta,
// its first line.
func rolloutMeta(path string) (id, cwd string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), agent.MaxLineBytes)
	if !sc.Scan() {
		return "", ""
	}
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			ID  string `json:"id"`
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "session_meta" {
		return "", ""
	}
	return l.Payload.ID, l.Payload.Cwd
}
