//go:build linux

package shell

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// sessionOf is the process session (and group) id of a running command.
func sessionOf(m *Manager, id int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.procs[id].pid
}

// members lists the live processes of a running command's session.
func members(t *testing.T, m *Manager, id int) []int {
	t.Helper()
	sid := sessionOf(m, id)
	return sessionMembers(map[int]bool{sid: true})[sid]
}

func pgrp(t *testing.T, pid int) int {
	t.Helper()
	f, err := readStatFields(pid)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := strconv.Atoi(f[2])
	return g
}

func TestCloseKillsEverything(t *testing.T) {
	t.Parallel()
	m := New(Options{Dir: t.TempDir(), Shell: "/bin/bash"})
	defer m.Close()

	// A command whose child started a grandchild in the background: sh
	// and its two sleeps, once all have forked.
	a := running(t, run(t, m, ExecRequest{Cmd: "sh -c 'sleep 300 & sleep 300'", YieldTimeMs: ptr(300)}))
	if !waitFor(func() bool { return len(members(t, m, a)) >= 3 }) {
		t.Fatalf("within a minute session a should have had sh and its two sleeps; it has %v", members(t, m, a))
	}
	// An interactive shell's background job, immune to the hangup the
	// shell passes on to its jobs: job control puts it in a process group
	// of its own, so only the session finds it.
	b := running(t, run(t, m, ExecRequest{Cmd: "bash --norc --noprofile -i", YieldTimeMs: ptr(100)}))
	jobRE := regexp.MustCompile(`\njob=(\d+)\r?\n`)
	out, _ := sendUntil(t, m, b, "nohup sleep 301 >/dev/null 2>&1 & echo \"job=$!\"\n", jobRE.MatchString)
	mt := jobRE.FindStringSubmatch(out)
	if mt == nil {
		t.Fatalf("the interactive shell should have printed its job's pid (job=N); it printed %q", out)
	}
	job, _ := strconv.Atoi(mt[1])
	// A command that exited and left a process behind; with no terminal
	// to hang up, nothing but Close ends it.
	r := run(t, m, ExecRequest{Cmd: "sleep 302 & echo $!", TTY: ptr(false)})
	leftover, err := strconv.Atoi(strings.TrimSpace(r.Output))
	if err != nil || r.ExitCode == nil {
		t.Fatalf("the leftover command should have exited within a minute and printed its background pid; got %s", r)
	}

	pids := append(members(t, m, a), members(t, m, b)...)
	pids = append(pids, leftover)
	if len(members(t, m, a)) < 3 || !sessionstest.Alive(job) || !sessionstest.Alive(leftover) {
		t.Fatalf("processes before Close: session a %v, job %d alive %v, leftover %d alive %v", members(t, m, a), job, sessionstest.Alive(job), leftover, sessionstest.Alive(leftover))
	}
	if sid := sessionOf(m, b); pgrp(t, job) == sid {
		t.Fatalf("the job is in process group %d of its session: the test proves nothing", sid)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if sessionstest.Alive(pid) {
			t.Errorf("pid %d survived Close", pid)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := m.Exec(context.Background(), ExecRequest{Cmd: "true"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Exec after Close: %v", err)
	}
	if _, err := m.WriteStdin(context.Background(), WriteRequest{SessionID: a}); !errors.Is(err, ErrClosed) {
		t.Fatalf("WriteStdin after Close: %v", err)
	}
}

// A process that ignores SIGHUP and SIGTERM is killed after the grace.
func TestCloseKillsStubbornProcess(t *testing.T) {
	t.Parallel()
	m := New(Options{Dir: t.TempDir(), Shell: "/bin/bash"})
	m.grace = 200 * time.Millisecond // meant to pass: the process ignores SIGTERM
	defer m.Close()
	// "ready" says the traps are set; the sleep, which inherits them, is
	// forked next (the echo after it keeps bash from exec'ing it).
	r := run(t, m, ExecRequest{Cmd: "trap '' HUP TERM; echo ready; sleep 300; echo", YieldTimeMs: ptr(200)})
	id := running(t, r)
	if !strings.Contains(r.Output, "ready") {
		if out, _ := pollUntil(t, m, id, func(s string) bool { return strings.Contains(s, "ready") }); !strings.Contains(out, "ready") {
			t.Fatalf("the command should have printed \"ready\" and gone on running; it printed %q and exited", r.Output+out)
		}
	}
	var pids []int
	if !waitFor(func() bool { pids = members(t, m, id); return len(pids) >= 2 }) {
		t.Fatalf("within a minute the command's session should have had the shell and sleep; it has %v", pids)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if sessionstest.Alive(pid) {
			t.Errorf("pid %d survived Close", pid)
		}
	}
}
