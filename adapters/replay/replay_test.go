package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/adapters/codex"
	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
)

const bundled = "recordings"

// Every bundled recording must be real codex output: each line parses to
// known events, each first turn has a thread, and all end with an exit.
func TestBundledRecordingsAreValidCodexOutput(t *testing.T) {
	recs, err := List(bundled)
	if err != nil || len(recs) < 5 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	for path := range recs {
		data, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")[1:]
		p, types, exits := codex.NewParser(), map[record.EventType]int{}, 0
		last := int64(-1)
		for i, l := range lines {
			var e entry
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("%s:%d: %v", path, i+2, err)
			}
			if e.AtMS < last {
				t.Errorf("%s:%d: time goes backwards", path, i+2)
			}
			last = e.AtMS
			if e.Exit != nil {
				exits++
				continue
			}
			for _, ev := range p.ParseLine(e.Line) {
				if ev.Type == record.EventRaw || ev.Type == record.EventUnknown {
					t.Errorf("%s:%d: not codex output: %s", path, i+2, l)
				}
				types[ev.Type]++
			}
		}
		if exits != 1 || types[record.EventThreadStarted] != 1 || types[record.EventTurnCompleted]+types[record.EventTurnFailed] != 1 {
			t.Errorf("%s: exits %d, events %v", path, exits, types)
		}
	}
}

func TestPlayKeepsPacingSubstitutesAndExits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	os.WriteFile(path, []byte(`{"replay":1,"task":"t"}
{"at_ms":0,"line":{"type":"thread.started","thread_id":"$THREAD"}}
{"at_ms":400,"line":{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"re: $PROMPT"}}}
{"at_ms":600,"exit":3}
`), 0o600)
	var out bytes.Buffer
	start := time.Now()
	code, err := Play(context.Background(), &out, path, 2, "th-1", `say "hi"`)
	took := time.Since(start)
	if err != nil || code != 3 {
		t.Fatalf("code %d err %v", code, err)
	}
	// 300 ms of pacing; the upper bound is room for a loaded machine.
	if took < 250*time.Millisecond || took > 10*time.Second {
		t.Errorf("600 ms of recording at speed 2 should take about 300 ms (at least 250 ms, at most 10 s); it took %s", took)
	}
	want := `{"type":"thread.started","thread_id":"th-1"}` + "\n" +
		`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"re: say \"hi\""}}` + "\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Play(ctx, &out, path, 0.001, "x", "y"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled play: %v", err)
	}
}

func TestCommandPicksTheRecording(t *testing.T) {
	state := t.TempDir()
	recs, err := Stage(state, bundled)
	if err != nil {
		t.Fatal(err)
	}
	a := New(func() agent.Parser { return codex.NewParser() }, []string{"/bin/zwarm", "__replay"})
	cmd, err := a.Command(agent.TurnRequest{StateDir: state, SessionID: "s1", Prompt: recs[0].Task, WorkingDir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Path != "/bin/zwarm" || cmd.Args[0] != "__replay" || !strings.HasPrefix(cmd.Args[len(cmd.Args)-3], filepath.Join(state, Dir)) ||
		cmd.Args[len(cmd.Args)-2] != "replay-s1" || cmd.Args[len(cmd.Args)-1] != recs[0].Task {
		t.Fatalf("%q", cmd.Args)
	}
	cmd, _ = a.Command(agent.TurnRequest{StateDir: state, SessionID: "s1", Prompt: "more", ThreadID: "replay-s1"})
	if filepath.Base(cmd.Args[len(cmd.Args)-3]) != "followup.jsonl" || cmd.Args[len(cmd.Args)-2] != "replay-s1" {
		t.Fatalf("follow-up: %q", cmd.Args)
	}
	if _, err := a.Command(agent.TurnRequest{StateDir: state, Prompt: "no such task"}); !errors.Is(err, config.ErrInvalidRequest) {
		t.Fatalf("unknown task: %v", err)
	}
	if _, err := Stage(t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no recordings") {
		t.Fatalf("empty replays dir: %v", err)
	}
}

// The demo works from any directory: its recordings are in the binary.
func TestBuiltInRecordingsStageFromAnywhere(t *testing.T) {
	t.Chdir(t.TempDir())
	state := t.TempDir()
	recs, err := Stage(state, "")
	if err != nil || len(recs) < 5 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	if _, err := os.Stat(filepath.Join(state, Dir, "followup.jsonl")); err != nil {
		t.Fatalf("the follow-up recording was not staged: %v", err)
	}
}
