package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// countingWriter counts the writes that reach the terminal.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

// A listing reaches the terminal in a few large writes, not one per cell.
func TestSessionTableIsWrittenInOneGo(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var list []*record.Session
	for i := range 1000 {
		c := 0.001
		list = append(list, new(sessionstest.WithStatus(record.Session{ID: fmt.Sprintf("%08x-0000-4000-8000-000000000000", i), Task: "task",
			Adapter: "codex", Model: "gpt-5.1-codex", CreatedAt: now, Turn: 1, CostUSD: &c, Usage: record.Usage{TotalTokens: 1500}}, record.StatusCompleted)))
	}
	for _, tty := range []bool{false, true} {
		w := &countingWriter{}
		io := &cli.Streams{Out: w, OutTTY: tty, Width: 120}
		if err := writeSessions(io, list, now, true, nil); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(w.String(), "\n"); lines < 1001 || w.writes > 4 {
			t.Errorf("tty=%v: %d lines in %d writes", tty, lines, w.writes)
		}
	}
}
