// Package demo is the orchestrated task of `zwarm demo`: a recorded
// orchestrating model and the recordings its workers play (with the replay
// adapter), all embedded in the binary, so the demo needs no API key.
//
// The recorded model answers from its recording in order: the n-th call of
// a conversation gets the n-th recorded response. Placeholders in the
// recorded call arguments are filled in when it answers: "$TASK:NAME" is
// the task of the worker recording NAME.jsonl and "$MODEL:NAME" its
// model, "$WORKER:N" the id of the
// N-th worker that delegate started in the conversation.
package demo

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/sessions/record"
)

//go:embed recording/*.json recording/*.jsonl
var recording embed.FS

// ReplaysDir is where the replay adapter finds recordings in a state dir.
const ReplaysDir = "replays"

// script is recording/model.json.
type script struct {
	Model string `json:"model"`
	Task  string `json:"task"`
	Steps []struct {
		DelayMS int64            `json:"delay_ms"`
		Usage   record.Usage     `json:"usage"`
		Output  []map[string]any `json:"output"`
	} `json:"steps"`
}

func load() (*script, error) {
	b, err := recording.ReadFile("recording/model.json")
	if err != nil {
		return nil, err
	}
	var s script
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("the demo's recorded model is broken: %w", err)
	}
	return &s, nil
}

// Task is the orchestrated task of the demo.
func Task() string {
	s, err := load()
	if err != nil {
		return ""
	}
	return s.Task
}

// ModelName is the model the recording was made with (for its prices).
func ModelName() string {
	s, err := load()
	if err != nil {
		return ""
	}
	return s.Model
}

// StageWorkers writes the workers' recordings into stateDir's replays
// folder, where the replay adapter looks for them. Each is written under
// another name and renamed into place: workers already running read that
// folder to find their own recording, and must never see one half written.
func StageWorkers(stateDir string) error {
	dir := filepath.Join(stateDir, ReplaysDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	names, err := recording.ReadDir("recording")
	if err != nil {
		return err
	}
	for _, e := range names {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		b, err := recording.ReadFile("recording/" + e.Name())
		if err != nil {
			return err
		}
		final := filepath.Join(dir, "demo-orchestrated-"+e.Name())
		tmp := filepath.Join(dir, ".staging-"+e.Name()+".part") // not *.jsonl: never listed
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, final); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return nil
}

// workerHeader is the task and model in the header of a worker recording.
func workerHeader(name string) (task, model string, err error) {
	b, err := recording.ReadFile("recording/" + name + ".jsonl")
	if err != nil {
		return "", "", fmt.Errorf("no worker recording %s: %w", name, err)
	}
	line, _, _ := bufio.NewReader(bytes.NewReader(b)).ReadLine()
	var h struct {
		Task  string `json:"task"`
		Model string `json:"model"`
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return "", "", err
	}
	return h.Task, h.Model, nil
}

// Model is the recorded orchestrating model.
type Model struct {
	s     *script
	speed float64
}

// NewModel returns the recorded model, pacing its answers at speed times
// the recorded thinking time (0 or less: as recorded).
func NewModel(speed float64) (*Model, error) {
	s, err := load()
	if err != nil {
		return nil, err
	}
	if speed <= 0 {
		speed = 1
	}
	return &Model{s: s, speed: speed}, nil
}

// Respond implements model.Client.
func (m *Model) Respond(ctx context.Context, req *model.Request) (*model.Response, error) {
	n, workers := progress(req.Input)
	if n >= len(m.s.Steps) {
		return m.finish(n)
	}
	step := m.s.Steps[n]
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Duration(float64(step.DelayMS)/m.speed) * time.Millisecond):
	}
	resp := &model.Response{ID: fmt.Sprintf("resp_demo_%d", n+1), Usage: step.Usage}
	if resp.Usage.TotalTokens == 0 {
		resp.Usage.TotalTokens = resp.Usage.InputTokens + resp.Usage.OutputTokens
	}
	for i, it := range step.Output {
		raw, err := m.item(n, i, it, workers)
		if err != nil {
			return nil, err
		}
		resp.Output = append(resp.Output, raw)
	}
	return resp, nil
}

// item fills in one recorded item: ids, placeholders, the arguments as the
// string the API sends.
func (m *Model) item(n, i int, it map[string]any, workers []string) (json.RawMessage, error) {
	out := map[string]any{}
	for k, v := range it {
		out[k] = v
	}
	switch out["type"] {
	case "reasoning":
		out["id"] = fmt.Sprintf("rs_demo_%d_%d", n+1, i)
		out["encrypted_content"] = "recorded-demo"
	case "function_call":
		args, _ := out["arguments"].(map[string]any)
		filled := map[string]any{}
		for k, v := range args {
			s, ok := v.(string)
			if !ok {
				filled[k] = v
				continue
			}
			val, err := fill(s, workers)
			if err != nil {
				return nil, err
			}
			filled[k] = val
		}
		b, _ := json.Marshal(filled)
		id := fmt.Sprintf("%d_%d", n+1, i)
		out["arguments"], out["id"], out["call_id"], out["status"] = string(b), "fc_demo_"+id, "call_demo_"+id, "completed"
	}
	return json.Marshal(out)
}

func fill(s string, workers []string) (string, error) {
	switch {
	case strings.HasPrefix(s, "$TASK:"):
		task, _, err := workerHeader(strings.TrimPrefix(s, "$TASK:"))
		return task, err
	case strings.HasPrefix(s, "$MODEL:"):
		_, model, err := workerHeader(strings.TrimPrefix(s, "$MODEL:"))
		return model, err
	case strings.HasPrefix(s, "$WORKER:"):
		var k int
		fmt.Sscanf(strings.TrimPrefix(s, "$WORKER:"), "%d", &k)
		if k < 1 || k > len(workers) {
			return "", fmt.Errorf("the demo recording refers to worker %d, but %d were started", k, len(workers))
		}
		return workers[k-1], nil
	}
	return s, nil
}

// finish answers past the end of the recording.
func (m *Model) finish(n int) (*model.Response, error) {
	b, _ := json.Marshal(map[string]any{"type": "function_call", "id": "fc_demo_end", "call_id": fmt.Sprintf("call_demo_end_%d", n),
		"name": "finish", "arguments": `{"summary":"The recording has ended."}`, "status": "completed"})
	return &model.Response{ID: "resp_demo_end", Output: []json.RawMessage{b}}, nil
}

// progress reads a conversation: how many responses the model gave (runs
// of its items), and the ids delegate returned, in order.
func progress(input []json.RawMessage) (int, []string) {
	type item struct {
		Type   string `json:"type"`
		Role   string `json:"role"`
		CallID string `json:"call_id"`
		Name   string `json:"name"`
		Output string `json:"output"`
	}
	n := 0
	inModel := false
	delegates := map[string]bool{}
	var workers []string
	for _, raw := range input {
		var it item
		json.Unmarshal(raw, &it)
		model := it.Type == "reasoning" || it.Type == "function_call" || it.Type == "message" && it.Role == "assistant"
		if model && !inModel {
			n++
		}
		inModel = model
		switch {
		case it.Type == "function_call" && it.Name == "delegate":
			delegates[it.CallID] = true
		case it.Type == "function_call_output" && delegates[it.CallID]:
			var d struct {
				SessionID string `json:"session_id"`
			}
			if json.Unmarshal([]byte(it.Output), &d) == nil && d.SessionID != "" {
				workers = append(workers, d.SessionID)
			}
		}
	}
	return n, workers
}
