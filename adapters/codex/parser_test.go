package codex

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/adapters/internal/parsertest"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// TestGoldens parses each testdata/*.jsonl fed whole, line by line and in
// odd-sized chunks; all three must produce the golden events.
func TestGoldens(t *testing.T) {
	parsertest.Goldens(t, NewParser)
}

// TestHugeLine: a 3 MiB event (a command's whole output) is parsed whole.
func TestHugeLine(t *testing.T) {
	out := strings.Repeat("x", 3<<20)
	line, _ := json.Marshal(map[string]any{"type": "item.completed", "item": map[string]any{
		"id": "item_0", "type": "command_execution", "command": "cat big", "aggregated_output": out, "exit_code": 0, "status": "completed"}})
	data := append(append([]byte(`{"type":"turn.started"}`+"\n"), line...), '\n')
	got := sessionstest.Feed(t, NewParser(), data, func(int) int { return 100 << 10 })
	if len(got) != 2 || got[1].Type != record.EventCommand || len(got[1].Output) != len(out) {
		t.Fatalf("got %d events; want turn.started and a command with %d bytes of output", len(got), len(out))
	}
}

func TestParseLineNeverPanics(t *testing.T) {
	parsertest.Typed(t, NewParser(), []string{"", "{", "{}", "null", `{"type":"item.completed"}`, `{"type":"item.completed","item":null}`,
		`{"type":"turn.completed","usage":null}`, `{"type":"error","message":{"x":1}}`, `{"type":"turn.failed"}`, "\xff\xfe", `[1,2]`})
}

// FuzzParseLine: whatever the line, the parser neither panics nor makes an
// event without a type.
func FuzzParseLine(f *testing.F) {
	parsertest.FuzzParseLine(f, NewParser(), trickyLines)
}
