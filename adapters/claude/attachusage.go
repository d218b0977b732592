package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/zwarm/zwarm/adapters/internal/agenthome"
	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

var _ agent.AttachAccountant = (*Adapter)(nil)

// AttachUsage sums what a person's model calls in claude's own CLI used
// between start and end: the assistant messages of the session's
// transcript, which claude keeps as projects/DIR/SESSION.jsonl under
// $CLAUDE_CONFIG_DIR (default ~/.claude), each message once (its lines
// repeat its usage).
func (a *Adapter) AttachUsage(threadID string, start, end time.Time) (record.Usage, bool, bool) {
	path := transcript(threadID)
	if path == "" {
		return record.Usage{}, false, false
	}
	f, err := os.Open(path)
	if err != nil {
		return record.Usage{}, false, false
	}
	defer f.Close()
	byMsg := map[string]usage{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), agent.MaxLineBytes)
	for sc.Scan() {
		var l struct {
			Type      string    `json:"type"`
			Timestamp time.Time `json:"timestamp"`
			Message   struct {
				ID    string `json:"id"`
				Model string `json:"model"`
				Usage *struct {
					Input         int64 `json:"input_tokens"`
					Output        int64 `json:"output_tokens"`
					CacheRead     int64 `json:"cache_read_input_tokens"`
					CacheCreation int64 `json:"cache_creation_input_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "assistant" || l.Message.Usage == nil ||
			l.Message.Model == "<synthetic>" || l.Timestamp.Before(start) || l.Timestamp.After(end) {
			continue
		}
		u := l.Message.Usage
		byMsg[l.Message.ID] = usage{input: u.Input, output: max(u.Output, byMsg[l.Message.ID].output), cacheRead: u.CacheRead, cacheCreation: u.CacheCreation}
	}
	if len(byMsg) == 0 {
		return record.Usage{}, false, false
	}
	var sum usage
	for _, u := range byMsg {
		sum = usage{input: sum.input + u.input, output: sum.output + u.output, cacheRead: sum.cacheRead + u.cacheRead, cacheCreation: sum.cacheCreation + u.cacheCreation}
	}
	return *sum.tokens(), false, true
}

// transcript is the session's transcript file, "" if none.
func transcript(sessionID string) string {
	return agenthome.Find("CLAUDE_CONFIG_DIR", ".claude", sessionID, func(id string) string {
		return filepath.Join("projects", "*", id+".jsonl")
	})
}
