package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/zwarm/zwarm/orchestrator/tools"
)

// names pairs each worker tool of the orchestrator that is served with the
// name it is served under.
var names = []struct{ orchestrator, mcp string }{
	{"delegate", "spawn"},
	{"wait", "wait"},
	{"check_session", "show"},
	{"converse", "inject"},
	{"list_sessions", "list"},
	{"end_session", "kill"},
	{"get_trajectory", "get_trajectory"},
	{"diff_session", "diff"},
	{"land_session", "land"},
	{"update_session", "update"},
}

// renamed matches the orchestrator's tool names in the tools' texts, which
// refer to one another ("call wait, then check_session"). peek_session is
// not served: show says all it says.
var renamed = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(delegate|converse|check_session|list_sessions|end_session|peek_session|diff_session|land_session|update_session)\b`)
})

// phrases are the hints that fit only the orchestrator's own loop.
var phrases = strings.NewReplacer(
	"in the [orchestrator] table of config.toml", "in the [mcp] table of config.toml",
	"the run's dir", "the directory zwarm mcp was started in",
	"say so in your summary", "say so",
	" Prefer this to sleep.", "",
)

// adapt rewrites a tool's text for MCP clients: the served names, and no
// hint about the orchestrator.
func adapt(text string) string {
	text = renamed().ReplaceAllStringFunc(text, func(name string) string {
		if name == "peek_session" {
			return "show"
		}
		for _, n := range names {
			if n.orchestrator == name {
				return n.mcp
			}
		}
		return name
	})
	return phrases.Replace(text)
}

// served is t as an MCP client sees it: its served name and adapted texts,
// its schema's descriptions included (those in override replaced).
func served(t tools.Tool, name string, override map[string]string) (tools.Tool, error) {
	schema, err := adaptSchema(t.Schema, override)
	if err != nil {
		return tools.Tool{}, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	t.Name, t.Description, t.Schema = name, adapt(t.Description), schema
	return t, nil
}

// adaptSchema adapts the descriptions of an arguments schema's properties,
// replacing those named in override.
func adaptSchema(schema json.RawMessage, override map[string]string) (json.RawMessage, error) {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("its schema is not a JSON object: %w", err)
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		p, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if d, ok := override[name]; ok {
			p["description"] = d
		} else if d, ok := p["description"].(string); ok {
			p["description"] = adapt(d)
		}
	}
	return json.Marshal(s)
}
