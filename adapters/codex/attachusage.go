package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/zwarm/zwarm/adapters/internal/agenthome"
	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

var _ agent.AttachAccountant = (*Adapter)(nil)

// AttachUsage reads what the thread had used when a person left codex's
// own CLI: the last token_count of its session rollout, which codex keeps
// under $CODEX_HOME (default ~/.codex) as sessions/YYYY/MM/DD/
// rollout-TIME-THREAD.jsonl. It is the thread's running total, as codex's
// turn.completed usage is.
func (a *Adapter) AttachUsage(threadID string, _, _ time.Time) (record.Usage, bool, bool) {
	path := rollout(threadID)
	if path == "" {
		return record.Usage{}, false, false
	}
	f, err := os.Open(path)
	if err != nil {
		return record.Usage{}, false, false
	}
	defer f.Close()
	var last record.Usage
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), agent.MaxLineBytes)
	for sc.Scan() {
		if u, ok := tokenCount(sc.Bytes()); ok {
			last, found = u, true
		}
	}
	return last, true, found
}

// rollout is the newest session rollout of the thread, "" if none.
func rollout(threadID string) string {
	return agenthome.Find("CODEX_HOME", ".codex", threadID, func(id string) string {
		return filepath.Join("sessions", "*", "*", "*", "rollout-*-"+id+".jsonl")
	})
}

// tokenCount reads a rollout line's token_count event: the thread's usage
// so far.
func tokenCount(line []byte) (record.Usage, bool) {
	if !bytes.Contains(line, []byte(`"token_count"`)) {
		return record.Usage{}, false
	}
	var ev struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
			Info *struct {
				Total *struct {
					Input     int64 `json:"input_tokens"`
					Cached    int64 `json:"cached_input_tokens"`
					Output    int64 `json:"output_tokens"`
					Reasoning int64 `json:"reasoning_output_tokens"`
				} `json:"total_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type != "event_msg" || ev.Payload.Type != "token_count" ||
		ev.Payload.Info == nil || ev.Payload.Info.Total == nil {
		return record.Usage{}, false
	}
	t := ev.Payload.Info.Total
	return record.Usage{InputTokens: t.Input, CachedInputTokens: t.Cached, OutputTokens: t.Output,
		ReasoningOutputTokens: t.Reasoning, TotalTokens: t.Input + t.Output}, true
}
