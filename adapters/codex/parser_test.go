package codex

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// feed writes data to a file the way an agent would and reads it back with
// a TurnReader after every write, as a live reader does.
func feed(t *testing.T, data []byte, sizes func(i int) int) []sessions.Event {
	t.Helper()
	path := filepath.Join(t.TempDir(), "turn_1.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := sessions.NewTurnReader(path, NewParser(), 0)
	defer rd.Close()
	var got []sessions.Event
	collect := func(ev sessions.Event) { got = append(got, ev) }
	for i := 0; len(data) > 0; i++ {
		n := min(sizes(i), len(data))
		if _, err := f.Write(data[:n]); err != nil {
			t.Fatal(err)
		}
		data = data[n:]
		if err := rd.Read(false, collect); err != nil {
			t.Fatal(err)
		}
	}
	if err := rd.Read(true, collect); err != nil {
		t.Fatal(err)
	}
	return got
}

func encode(t *testing.T, evs []sessions.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// TestGoldens parses each testdata/*.jsonl fed whole, line by line and in
// odd-sized chunks; all three must produce the golden events.
func TestGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no goldens")
	}
	for _, in := range files {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".jsonl") + ".golden"
			whole := encode(t, feed(t, data, func(int) int { return len(data) }))
			if *update {
				if err := os.WriteFile(golden, whole, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			modes := map[string]func(int) int{
				"whole": func(int) int { return len(data) },
				"lines": func(i int) int {
					if i < len(lines) {
						return len(lines[i])
					}
					return 1
				},
				"chunks": func(i int) int { return []int{1, 3, 7, 13, 64, 2, 511}[i%7] },
			}
			for name, sizes := range modes {
				if got := encode(t, feed(t, data, sizes)); !bytes.Equal(got, want) {
					t.Errorf("%s: events differ from %s\n got:\n%s\nwant:\n%s", name, golden, got, want)
				}
			}
		})
	}
}

// TestHugeLine: a 3 MiB event (a command's whole output) is parsed whole.
func TestHugeLine(t *testing.T) {
	out := strings.Repeat("x", 3<<20)
	line, _ := json.Marshal(map[string]any{"type": "item.completed", "item": map[string]any{
		"id": "item_0", "type": "command_execution", "command": "cat big", "aggregated_output": out, "exit_code": 0, "status": "completed"}})
	data := append(append([]byte(`{"type":"turn.started"}`+"\n"), line...), '\n')
	got := feed(t, data, func(int) int { return 100 << 10 })
	if len(got) != 2 || got[1].Type != sessions.EventCommand || len(got[1].Output) != len(out) {
		t.Fatalf("got %d events; want turn.started and a command with %d bytes of output", len(got), len(out))
	}
}

func TestParseLineNeverPanics(t *testing.T) {
	p := NewParser()
	for _, in := range []string{"", "{", "{}", "null", `{"type":"item.completed"}`, `{"type":"item.completed","item":null}`,
		`{"type":"turn.completed","usage":null}`, `{"type":"error","message":{"x":1}}`, `{"type":"turn.failed"}`, "\xff\xfe", `[1,2]`} {
		p.ParseLine([]byte(in))
	}
}

func FuzzParseLine(f *testing.F) {
	data, _ := os.ReadFile("testdata/full_turn.jsonl")
	for _, l := range bytes.Split(data, []byte("\n")) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ev := range NewParser().ParseLine(b) {
			if ev.Type == "" {
				t.Fatalf("event without type from %q", b)
			}
		}
	})
}
