package orchestrator

import (
	"encoding/json"
	"strings"

	"github.com/zwarm/zwarm/sessions/agent"
)

// item is what the run reads of a conversation item; the item itself is
// always kept as raw JSON.
type item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Content   json.RawMessage `json:"content"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

func inspect(raw json.RawMessage) item {
	var it item
	json.Unmarshal(raw, &it)
	if it.Type == "" && it.Role != "" {
		it.Type = "message"
	}
	return it
}

// isOutput: the result of a call (function_call_output and its kin).
func (it item) isOutput() bool { return strings.HasSuffix(it.Type, "_output") }

// isInput: a message of the user, the system or zwarm.
func (it item) isInput() bool { return it.Type == "message" && it.Role != "assistant" }

// isModel: an item the model produced (reasoning, its messages, calls).
func (it item) isModel() bool { return !it.isOutput() && !it.isInput() }

// isCall: a model item that expects an output.
func (it item) isCall() bool { return it.isModel() && it.CallID != "" }

// text is a message's text, or a reasoning item's summary.
func (it item) text() string {
	if it.Type == "reasoning" {
		parts := make([]string, 0, len(it.Summary))
		for _, s := range it.Summary {
			parts = append(parts, s.Text)
		}
		return strings.Join(parts, "\n")
	}
	return agent.ContentText(it.Content)
}

// outputText is an output's text.
func (it item) outputText() string { return agent.ContentText(it.Output) }

// message is an input message item.
func message(role, text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "message", "role": role,
		"content": []any{map[string]any{"type": "input_text", "text": text}}})
	return b
}

// output is a function call's output item.
func output(callID, text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "function_call_output", "call_id": callID, "output": text})
	return b
}

// outputFor is the output item answering a call of any kind.
func outputFor(call item, text string) json.RawMessage {
	typ := "function_call_output"
	if call.Type != "function_call" && call.Type != "" {
		typ = call.Type + "_output"
	}
	b, _ := json.Marshal(map[string]any{"type": typ, "call_id": call.CallID, "output": text})
	return b
}
