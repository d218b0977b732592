package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/adapters/internal/agenthome"
	"github.com/zwarm/zwarm/sessions/agent"
)

var _ agent.ThreadFinder = (*Adapter)(nil)

// ThreadsSince lists the sessions claude wrote in dir since since, other
// than not: their transcripts, projects/DIR/SESSION.jsonl under
// $CLAUDE_CONFIG_DIR (default ~/.claude), written since then, whose lines
// name dir as their cwd.
func (a *Adapter) ThreadsSince(dir string, since time.Time, not string) []string {
	home := agenthome.Home("CLAUDE_CONFIG_DIR", ".claude")
	if home == "" {
		return nil
	}
	var out []string
	for _, path := range agenthome.WrittenSince(home, since, filepath.Join("projects", "*", "*.jsonl")) {
		id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		if id != not && transcriptCwd(path) == dir {
			out = append(out, id)
		}
	}
	return out
}

// transcriptCwd is the working dir a transcript's first lines name, "" if
// none does.
func transcriptCwd(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), agent.MaxLineBytes)
	for n := 0; n < 50 && sc.Scan(); n++ {
		var l struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Cwd != "" {
			return l.Cwd
		}
	}
	return ""
}
