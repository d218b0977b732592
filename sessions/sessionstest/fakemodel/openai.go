package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// responses serves POST /v1/responses (codex, the orchestrator) as a
// Responses API stream.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rep, n := s.next(r, body, openaiUserText(body))
	if !stall(r, rep) {
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status != 0 {
		http.Error(w, firstNonEmpty(rep.Body, `{"error":{"message":"fake model error","type":"server_error"}}`), rep.Status)
		return
	}
	id := fmt.Sprintf("resp_%d", n)
	startSSE(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	idx := 0
	item := func(it map[string]any) {
		for k, v := range rep.Extra {
			it[k] = v
		}
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": idx, "item": it})
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": idx, "item": it})
		idx++
	}
	if rep.Reasoning != "" || rep.Encrypted != "" {
		it := map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_%d", n), "summary": []any{}}
		if rep.Reasoning != "" {
			it["summary"] = []any{map[string]any{"type": "summary_text", "text": rep.Reasoning}}
		}
		if rep.Encrypted != "" {
			it["encrypted_content"] = rep.Encrypted
		}
		item(it)
	}
	if rep.Text != "" {
		item(map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", n), "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	if rep.ToolSearch != "" {
		item(map[string]any{"type": "tool_search_call", "id": fmt.Sprintf("ts_%d", n), "call_id": fmt.Sprintf("call_ts_%d", n),
			"execution": "client", "status": "completed", "arguments": map[string]any{"query": rep.ToolSearch}})
	}
	calls := rep.Calls
	if rep.Tool != "" {
		calls = append([]Call{{Name: rep.Tool, Args: rep.Args}}, calls...)
	}
	for i, c := range calls {
		suffix := fmt.Sprint(n)
		if i > 0 {
			suffix = fmt.Sprintf("%d_%d", n, i)
		}
		fc := map[string]any{"type": "function_call", "id": "fc_" + suffix, "call_id": "call_" + suffix,
			"name": c.Name, "arguments": c.Args, "status": "completed"}
		if c.Namespace != "" {
			fc["namespace"] = c.Namespace
		}
		if c.CallID != "" {
			fc["call_id"] = c.CallID
		}
		item(fc)
	}
	if rep.Cut {
		// Abort the connection: the client sees the stream end with an
		// error, without response.completed.
		panic(http.ErrAbortHandler)
	}
	in, out := orDefault(rep.InputTokens, 100), orDefault(rep.OutputTokens, 10)
	final, details := "response.completed", any(nil)
	if rep.Incomplete != "" {
		final, details = "response.incomplete", map[string]any{"reason": rep.Incomplete}
	}
	sse(w, final, map[string]any{"type": final, "response": map[string]any{
		"id": id, "incomplete_details": details,
		"usage": map[string]any{
			"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": rep.CachedTokens},
			"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": rep.ReasoningTokens},
			"total_tokens": in + out,
		}}})
}

// openaiUserText joins the text of the user messages of a Responses request.
func openaiUserText(body []byte) string {
	var req struct {
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"input"`
	}
	json.Unmarshal(body, &req)
	var b strings.Builder
	for _, it := range req.Input {
		if it.Role != "user" {
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(it.Content, &parts) == nil {
			for _, p := range parts {
				b.WriteString(p.Text + "\n")
			}
		} else {
			var s string
			json.Unmarshal(it.Content, &s)
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
