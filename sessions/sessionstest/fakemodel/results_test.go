package fakemodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestToolResults(t *testing.T) {
	responses := `{"input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
		{"type":"function_call","name":"spawn","namespace":"mcp__zwarm","arguments":"{\"task\":\"x\"}","call_id":"c1"},
		{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"Wall time: 0.1 seconds\nOutput:"},{"type":"input_text","text":"{\"session_id\":\"s1\"}"}]},
		{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c2"},
		{"type":"function_call_output","call_id":"c2","output":"ok"}]}`
	want := []ToolResult{
		{Tool: "spawn", Namespace: "mcp__zwarm", Args: `{"task":"x"}`, Output: "Wall time: 0.1 seconds\nOutput:\n{\"session_id\":\"s1\"}"},
		{Tool: "exec_command", Args: "{}", Output: "ok"},
	}
	got := ToolResults([]byte(responses))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("responses:\n%+v\nwant\n%+v", got, want)
	}
	if got[0].Name() != "mcp__zwarm__spawn" || got[1].Name() != "exec_command" {
		t.Errorf("names %q %q", got[0].Name(), got[1].Name())
	}

	messages := `{"messages":[
		{"role":"user","content":"go"},
		{"role":"assistant","content":[{"type":"text","text":"on it"},{"type":"tool_use","id":"t1","name":"mcp__zwarm__spawn","input":{"task":"x"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"{\"session_id\":\"s1\"}"}]}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"mcp__zwarm__wait","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"timed out","is_error":true}]}]}`
	want = []ToolResult{
		{Tool: "mcp__zwarm__spawn", Args: `{"task":"x"}`, Output: `{"session_id":"s1"}`},
		{Tool: "mcp__zwarm__wait", Args: `{}`, Output: "timed out", IsError: true},
	}
	if got := ToolResults([]byte(messages)); !reflect.DeepEqual(got, want) {
		t.Fatalf("messages:\n%+v\nwant\n%+v", got, want)
	}
}

// A Responses model loads deferred tools with a client-executed
// tool_search, then calls a function of the namespace it found.
func TestToolSearchAndNamespacedCall(t *testing.T) {
	srv, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.On("go", Reply{ToolSearch: "zwarm workers"}, Reply{Calls: []Call{{Name: "spawn", Namespace: "mcp__zwarm", Args: `{"task":"x"}`}}})
	var items []map[string]any
	for range 2 {
		for _, ev := range postResponses(t, srv.URL, `{"input":[{"role":"user","content":"go"}]}`) {
			if ev["type"] == "response.output_item.done" {
				items = append(items, ev["item"].(map[string]any))
			}
		}
	}
	if len(items) != 2 {
		t.Fatalf("items %v", items)
	}
	ts, fc := items[0], items[1]
	if ts["type"] != "tool_search_call" || ts["execution"] != "client" || ts["call_id"] == "" ||
		!reflect.DeepEqual(ts["arguments"], map[string]any{"query": "zwarm workers"}) {
		t.Errorf("tool search %v", ts)
	}
	if fc["type"] != "function_call" || fc["name"] != "spawn" || fc["namespace"] != "mcp__zwarm" || fc["arguments"] != `{"task":"x"}` {
		t.Errorf("call %v", fc)
	}
}

// postResponses makes one Responses request and returns its events.
func postResponses(t *testing.T, url, body string) []map[string]any {
	t.Helper()
	resp, err := http.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatal(err)
			}
			out = append(out, ev)
		}
	}
	return out
}
