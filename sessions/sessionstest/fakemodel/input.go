package fakemodel

import (
	"encoding/json"
	"github.com/zwarm/zwarm/sessions/agent"
)

// Item is one input item of a Responses API request, as a test reads it.
type Item struct {
	Type      string
	Role      string
	Text      string // a message's text parts, joined
	Name      string // a function call's tool
	CallID    string
	Arguments string // a function call's arguments
	Output    string // a function call output
	Raw       json.RawMessage
}

// Input returns the input items of a Responses API request body, in order.
func Input(body []byte) []Item {
	var req struct {
		Input []json.RawMessage `json:"input"`
	}
	json.Unmarshal(body, &req)
	out := make([]Item, 0, len(req.Input))
	for _, raw := range req.Input {
		var it struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Name      string          `json:"name"`
			CallID    string          `json:"call_id"`
			Arguments string          `json:"arguments"`
			Output    json.RawMessage `json:"output"`
		}
		json.Unmarshal(raw, &it)
		if it.Type == "" && it.Role != "" {
			it.Type = "message"
		}
		item := Item{Type: it.Type, Role: it.Role, Name: it.Name, CallID: it.CallID, Arguments: it.Arguments, Raw: raw}
		item.Text = agent.ContentText(it.Content)
		item.Output = agent.ContentText(it.Output)
		out = append(out, item)
	}
	return out
}

// Outputs returns the outputs of the function calls of tool name in a
// request body, oldest first.
func Outputs(body []byte, name string) []string {
	items := Input(body)
	calls := map[string]string{}
	var out []string
	for _, it := range items {
		switch it.Type {
		case "function_call":
			calls[it.CallID] = it.Name
		case "function_call_output":
			if calls[it.CallID] == name {
				out = append(out, it.Output)
			}
		}
	}
	return out
}
