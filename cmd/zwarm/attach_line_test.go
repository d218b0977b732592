package main

import (
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// The line an attach ends with says a CLI that exited non-zero at once
// failed to start (a login, an onboarding question), and the exit of one
// a person worked in; a clean leave says neither.
func TestDetachedLineSaysACLIFailedToStart(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	span := func(d time.Duration, code int) *record.Session {
		end := start.Add(d)
		return new(sessionstest.WithStatus(record.Session{ID: "3f2a0001-0000-0000-0000-000000000000", Adapter: "claude", WorkingDir: "/w",
			Attaches: []record.AttachSpan{{Start: start, End: &end, ExitCode: &code}}}, record.StatusCompleted))
	}
	for _, tc := range []struct {
		s         *record.Session
		want, not string
	}{
		{span(2*time.Second, 1), "attached for 2s; the claude CLI exited 1 at once: it failed to start (run it in /w yourself", ""},
		{span(5*time.Minute, 1), "attached for 5m00s; the claude CLI exited 1; it is completed again", "failed to start"},
		{span(5*time.Minute, 0), "attached for 5m00s; it is completed again", "exited"},
	} {
		got := detachedLine(tc.s, false)
		if !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("%q; want %q, without %q", got, tc.want, tc.not)
		}
	}
}
