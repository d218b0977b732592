// Command mkstate writes a state directory of settled sessions, for the
// benchmarks that time zwarm as a whole process (docs/performance.md):
//
//	mkstate -dir DIR -n 1000                 1,000 sessions of two turns each
//	mkstate -dir DIR -n 1 -turn-mb 100       one session whose turn file is 100 MB of valid codex events
//	mkstate -dir DIR -n 1 -turns 1 -turn-lines 3000000
//	                                         one session whose turn has 3 million lines
//	mkstate ... -cut-line                    and a line the supervisor cut (a 500 MB one) in its middle
//	mkstate ... -mix                         some failed and killed, some of a model without a price,
//	                                         some a run's workers, usage varying (mix, below)
//	mkstate -dir DIR -n 1 -turn-mb 50 -recorded
//	                                         one session of two turns of a real codex session (recorded/),
//	                                         each grown to 50 MB by repeating its items
//
// Records are written as zwarm writes them (the sessions package's own
// types), with realistic prompts, usage and messages; turn files hold real
// codex event lines, every one valid JSON.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/record"
)

func main() {
	dir := flag.String("dir", "", "state dir to create")
	n := flag.Int("n", 1000, "sessions")
	turns := flag.Int("turns", 2, "turns per session")
	turnMB := flag.Int("turn-mb", 0, "size of each turn file in MB (0: a small realistic turn)")
	turnLines := flag.Int("turn-lines", 0, "lines of each turn file (0: as -turn-mb says)")
	cut := flag.Bool("cut-line", false, "put the marker of a cut 500 MB line in the middle of each turn")
	varied := flag.Bool("mix", false, "vary the sessions' statuses, models, sources and usage")
	recorded := flag.Bool("recorded", false, "turn files grown from a real codex session's (recorded/), not made up")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "mkstate: -dir is required")
		os.Exit(2)
	}
	shape := turnShape{size: int64(*turnMB) << 20, lines: *turnLines, cut: *cut, recorded: *recorded}
	if shape.size == 0 && shape.lines == 0 {
		shape.size = 4 << 10
	}
	if err := run(*dir, *n, *turns, shape, *varied); err != nil {
		fmt.Fprintln(os.Stderr, "mkstate:", err)
		os.Exit(1)
	}
}

// mix is what session i of a varied state dir is: its status, whether its
// model has a price, whether a run started it, and how much it used (a
// multiple of a plain session's usage).
func mix(i int) (status record.Status, priced bool, source record.Source, scale int64) {
	status, priced, source, scale = record.StatusCompleted, true, record.UserSource, int64(1+i%5)
	switch {
	case i%7 == 3:
		status = record.StatusFailed
	case i%11 == 5:
		status = record.StatusKilled
	}
	if i%13 == 4 {
		priced = false
	}
	if i%17 == 2 {
		source = record.RunSource("0199a213-81c0-7800-8aa1-bbab2a035a53")
	}
	return status, priced, source, scale
}

func run(dir string, n, turns int, shape turnShape, varied bool) error {
	start := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("%08x-%04x-4000-8000-%012x", 0x3f2a0000+i, i%0xffff, i)
		sdir := filepath.Join(dir, "sessions", id)
		if err := os.MkdirAll(filepath.Join(sdir, "turns"), 0o700); err != nil {
			return err
		}
		created := start.Add(time.Duration(i) * time.Minute)
		s := statusfield.With(record.Session{Version: record.SchemaVersion, ID: id,
			Task:    fmt.Sprintf("fix the failing integration test %d in the payment service and add a regression test for it", i),
			Adapter: "codex", Model: "gpt-5.1-codex-mini", WorkingDir: "/home/dev/project", Source: record.UserSource,
			CreatedAt: created, UpdatedAt: created.Add(3 * time.Minute), ThreadID: "0199a213-81c0-7800-8aa1-bbab2a035a53",
			LastMessage: "Fixed the race in the settlement retry loop; the new test fails before the change and passes after it."}, record.StatusCompleted)
		status, priced, scale := record.StatusCompleted, true, int64(1)
		if varied {
			status, priced, s.Source, scale = mix(i)
			if !priced {
				s.Model = "local-llama-70b" // no price known
			}
		}
		code := 0
		var total record.Usage
		for t := 1; t <= turns; t++ {
			end := created.Add(time.Duration(t) * time.Minute)
			u := record.Usage{InputTokens: 24763 * scale, CachedInputTokens: 24448 * scale, OutputTokens: 1220 * scale,
				ReasoningOutputTokens: 640 * scale, TotalTokens: 25983 * scale}
			total = total.Add(u)
			cost := 0.0033 * float64(scale)
			prompt := s.Task
			if t > 1 {
				prompt = "also update the changelog and run the whole suite once more"
			}
			size, err := writeTurn(filepath.Join(sdir, "turns", fmt.Sprintf("turn_%d.jsonl", t)), shape, t)
			if err != nil {
				return err
			}
			turn := statusfield.With(record.Turn{N: t, Prompt: prompt, StartedAt: end.Add(-time.Minute), EndedAt: &end,
				ExitCode: &code, Usage: u, CostUSD: &cost, Resumed: t > 1,
				LastMessage: s.LastMessage, Offset: size, ThreadUsage: &total}, record.StatusCompleted)
			if !priced {
				turn.CostUSD = nil
			}
			s.Turns = append(s.Turns, turn)
		}
		end := created.Add(time.Duration(turns) * time.Minute)
		cost := 0.0033 * float64(turns) * float64(scale)
		s.EndedAt, s.ExitCode, s.Turn, s.Usage, s.CostUSD = &end, &code, turns, total, &cost
		if !priced {
			s.CostUSD = nil
		}
		if status != record.StatusCompleted {
			last := &s.Turns[len(s.Turns)-1]
			failed := 1
			if status == record.StatusKilled {
				failed = 143
				s.Error = "killed by the user"
			} else {
				s.Error = "unexpected status 500 from the model"
			}
			statusfield.Set(&s, status)
			statusfield.Set(last, status)
			s.ExitCode, last.ExitCode, last.Error = &failed, &failed, s.Error
		}
		data, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(sdir, "meta.json"), append(data, '\n'), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// turnShape is what a turn file holds: about size bytes, or lines lines,
// with the marker of a cut line in the middle if cut is set.
type turnShape struct {
	size  int64
	lines int
	cut   bool
	// recorded grows the turn from the real session's turn of its
	// number (recorded/), rather than making one up.
	recorded bool
}

// writeTurn writes a turn file of the shape, a piece at a time, and returns
// its size.
func writeTurn(path string, shape turnShape, n int) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cw := &countWriter{w: f}
	w := bufio.NewWriterSize(cw, 1<<20)
	if shape.recorded {
		if err := grownTurn(w, shape, n); err != nil {
			return 0, err
		}
	} else {
		turnBody(w, shape)
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return cw.n, f.Close()
}

type countWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// turnBody writes codex output of the shape: reasoning, commands with
// multi-line output (escaped tabs, quotes and unicode), file changes, plans
// and messages, every line valid JSON, ending with turn.completed.
func turnBody(w *bufio.Writer, shape turnShape) {
	var written int64
	lines := 0
	line := func(v any) {
		data, _ := json.Marshal(v)
		w.Write(data)
		w.WriteByte('\n')
		written += int64(len(data) + 1)
		lines++
	}
	more := func() bool {
		if shape.lines > 0 {
			return lines < shape.lines-2
		}
		return written < shape.size
	}
	cutAt := -1
	if shape.cut {
		cutAt = max(shape.lines/2, int(shape.size/4000))
	}
	item := func(phase string, it map[string]any) { line(map[string]any{"type": "item." + phase, "item": it}) }
	line(map[string]any{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"})
	line(map[string]any{"type": "turn.started"})
	// Codex's plan is one item, started early, updated as work goes on,
	// completed (again) at the turn's end.
	plan := func(phase string, done int) {
		items := []map[string]any{}
		for k, text := range []string{"reproduce the failure", "fix the retry loop", "add a regression test"} {
			items = append(items, map[string]any{"text": text, "completed": k < done})
		}
		item(phase, map[string]any{"id": "plan", "type": "todo_list", "items": items})
	}
	plan("started", 0)
	output := strings.Repeat("ok  \tgithub.com/acme/payments/settle\t0.012s\n--- PASS: TestRetry \"quoted\" (0.00s) ✓\n", 20)
	for i := 0; more(); i++ {
		if cutAt >= 0 && lines >= cutAt {
			cutAt = -1
			w.WriteString(`{"type":"zwarm.truncated","bytes":524288000}` + "\n")
			lines++
		}
		id := func(k int) string { return fmt.Sprintf("item_%d", 5*i+k) }
		item("completed", map[string]any{"id": id(0), "type": "reasoning", "text": fmt.Sprintf("**Checking step %d** of the retry loop before changing it", i)})
		cmd := map[string]any{"id": id(1), "type": "command_execution", "command": "/bin/bash -lc 'go test ./...'", "aggregated_output": "", "exit_code": nil, "status": "in_progress"}
		item("started", cmd)
		cmd["aggregated_output"], cmd["exit_code"], cmd["status"] = output, 0, "completed"
		item("completed", cmd)
		item("completed", map[string]any{"id": id(2), "type": "file_change", "status": "completed",
			"changes": []map[string]any{{"path": "/home/dev/project/settle/retry.go", "kind": "update"}}})
		if i%50 == 0 {
			plan("updated", min(2, i/50))
		}
		item("completed", map[string]any{"id": id(3), "type": "reasoning", "text": "The retry loop needs a bound."})
		item("completed", map[string]any{"id": id(4), "type": "agent_message", "text": fmt.Sprintf("Step %d done; the tests pass.", i)})
	}
	plan("completed", 3)
	line(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 1220, "reasoning_output_tokens": 640}})
}
