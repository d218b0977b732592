package codex

import (
	"encoding/json"
	"strconv"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

var _ agent.UsageReporter = (*Adapter)(nil)

// CallUsage reads codex's OpenTelemetry logs (OTLP/HTTP, JSON): each
// model call's response.completed event (codex.sse_event) carries its
// token counts, sent about a second after the call, while the turn goes
// on, where `exec --json` says the turn's usage only at its end.
func (a *Adapter) CallUsage(body []byte) []record.Usage {
	var req struct {
		ResourceLogs []struct {
			ScopeLogs []struct {
				LogRecords []struct {
					Attributes []struct {
						Key   string `json:"key"`
						Value struct {
							String *string          `json:"stringValue"`
							Int    *json.RawMessage `json:"intValue"`
						} `json:"value"`
					} `json:"attributes"`
				} `json:"logRecords"`
			} `json:"scopeLogs"`
		} `json:"resourceLogs"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []record.Usage
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				attrs := map[string]string{}
				for _, at := range r.Attributes {
					switch {
					case at.Value.String != nil:
						attrs[at.Key] = *at.Value.String
					case at.Value.Int != nil:
						var v string // OTLP JSON writes 64-bit integers as strings
						if json.Unmarshal(*at.Value.Int, &v) != nil {
							v = string(*at.Value.Int)
						}
						attrs[at.Key] = v
					}
				}
				if attrs["event.name"] != "codex.sse_event" || attrs["event.kind"] != "response.completed" || attrs["input_token_count"] == "" {
					continue
				}
				n := func(k string) int64 { v, _ := strconv.ParseInt(attrs[k], 10, 64); return max(0, v) }
				u := record.Usage{InputTokens: n("input_token_count"), CachedInputTokens: n("cached_token_count"),
					OutputTokens: n("output_token_count"), ReasoningOutputTokens: n("reasoning_token_count")}
				u.TotalTokens = u.InputTokens + u.OutputTokens
				out = append(out, u)
			}
		}
	}
	return out
}
