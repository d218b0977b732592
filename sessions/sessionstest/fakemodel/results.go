package fakemodel

import (
	"encoding/json"
	"github.com/zwarm/zwarm/sessions/agent"
)

// ToolResult is a tool call an agent made and the result it sent back to
// the model, as a later request carries them.
type ToolResult struct {
	// Tool is the name the model called; Namespace its namespace, if the
	// tool was served in one (codex's MCP tools: mcp__SERVER).
	Tool, Namespace string
	Args            string // JSON
	Output          string // the result's text parts, joined
	IsError         bool   // flagged as an error (Messages API only)
}

// ToolResults returns the tool calls of a request body whose results it
// carries, oldest first, for either API: Responses (function_call and
// function_call_output items) or Messages (tool_use and tool_result
// blocks).
func ToolResults(body []byte) []ToolResult {
	var probe struct {
		Messages json.RawMessage `json:"messages"`
	}
	json.Unmarshal(body, &probe)
	if len(probe.Messages) > 0 {
		return anthropicResults(probe.Messages)
	}
	var out []ToolResult
	calls := map[string]ToolResult{}
	for _, it := range Input(body) {
		switch it.Type {
		case "function_call":
			var ns struct {
				Namespace string `json:"namespace"`
			}
			json.Unmarshal(it.Raw, &ns)
			calls[it.CallID] = ToolResult{Tool: it.Name, Namespace: ns.Namespace, Args: it.Arguments}
		case "function_call_output":
			if c, ok := calls[it.CallID]; ok {
				c.Output = it.Output
				out = append(out, c)
			}
		}
	}
	return out
}

func anthropicResults(raw json.RawMessage) []ToolResult {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(raw, &msgs)
	var out []ToolResult
	uses := map[string]ToolResult{}
	for _, m := range msgs {
		var blocks []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // plain text
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				uses[b.ID] = ToolResult{Tool: b.Name, Args: string(b.Input)}
			case "tool_result":
				if u, ok := uses[b.ToolUseID]; ok {
					u.Output, u.IsError = agent.ContentText(b.Content), b.IsError
					out = append(out, u)
				}
			}
		}
	}
	return out
}

// Name is the tool's full name: NAMESPACE__TOOL for a namespaced one, so
// that an MCP tool is mcp__SERVER__TOOL whichever API called it.
func (r ToolResult) Name() string {
	if r.Namespace != "" {
		return r.Namespace + "__" + r.Tool
	}
	return r.Tool
}
