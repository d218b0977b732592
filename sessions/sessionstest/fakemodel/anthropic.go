package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// messages serves POST /v1/messages (claude) as a Messages API stream.
// Requests that do not ask for a stream are side calls of the CLI (quota
// checks, titles); they get a short answer and do not use the script.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	json.Unmarshal(body, &req)
	if !req.Stream {
		s.mu.Lock()
		s.record(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Time: time.Now()})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_side", "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{map[string]any{"type": "text", "text": "ok"}}, "stop_reason": "end_turn",
			"usage": map[string]any{"input_tokens": 1, "output_tokens": 1}})
		return
	}
	rep, n := s.next(r, body, anthropicUserText(body))
	if !stall(r, rep) {
		return
	}
	if rep.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		io.WriteString(w, firstNonEmpty(rep.Body, `{"type":"error","error":{"type":"api_error","message":"fake model error"}}`))
		return
	}
	in, out := orDefault(rep.InputTokens, 100), orDefault(rep.OutputTokens, 10)
	model := firstNonEmpty(req.Model, "claude-sonnet-4-5")
	startSSE(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 1, "cache_read_input_tokens": rep.CachedTokens, "cache_creation_input_tokens": 0}}})
	idx := 0
	block := func(start map[string]any, deltas ...map[string]any) {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": start})
		for _, d := range deltas {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": d})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if rep.Reasoning != "" {
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""},
			map[string]any{"type": "thinking_delta", "thinking": rep.Reasoning},
			map[string]any{"type": "signature_delta", "signature": "sig"})
	}
	if rep.Text != "" {
		block(map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": rep.Text})
	}
	stop := "end_turn"
	if rep.Tool != "" {
		stop = "tool_use"
		block(map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", n), "name": rep.Tool, "input": map[string]any{}},
			map[string]any{"type": "input_json_delta", "partial_json": rep.Args})
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": out}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// anthropicUserText joins the text of the user messages of a request
// (tool results excluded, so a tool's output never routes a conversation).
func anthropicUserText(body []byte) string {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &req)
	var b strings.Builder
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			for _, p := range parts {
				if p.Type == "text" {
					b.WriteString(p.Text + "\n")
				}
			}
		} else {
			var s string
			json.Unmarshal(m.Content, &s)
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}
