//go:build linux

package shell

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func alive(pid int) bool {
	state, _, ok := readStat(pid)
	return ok && state != 'Z'
}

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
	has := func(sub string) func(string) bool { return func(s string) bool { return strings.Contains(s, sub) } }

	// A command whose child started a grandchild in the background.
	a := running(t, run(t, m, ExecRequest{Cmd: "sh -c 'sleep 300 & sleep 300'", YieldTimeMs: ptr(300)}))
	// An interactive shell's background job, immune to the hangup the
	// shell passes on to its jobs: job control puts it in a process group
	// of its own, so only the session finds it.
	b := running(t, run(t, m, ExecRequest{Cmd: "bash --norc --noprofile -i", YieldTimeMs: ptr(100)}))
	out, _ := sendUntil(t, m, b, "nohup sleep 301 >/dev/null 2>&1 & echo \"job=$!\"\n", has("\njob="))
	job, _ := strconv.Atoi(strings.Fields(out[strings.Index(out, "\njob=")+5:])[0])
	// A command that exited and left a process behind; with no terminal
	// to hang up, nothing but Close ends it.
	r := run(t, m, ExecRequest{Cmd: "sleep 302 & echo $!", TTY: ptr(false)})
	leftover, err := strconv.Atoi(strings.TrimSpace(r.Output))
	if err != nil || r.ExitCode == nil {
		t.Fatalf("leftover command: %s", r)
	}

	pids := append(members(t, m, a), members(t, m, b)...)
	pids = append(pids, leftover)
	if len(members(t, m, a)) < 3 || !alive(job) || !alive(leftover) {
		t.Fatalf("processes before Close: session a %v, job %d alive %v, leftover %d alive %v", members(t, m, a), job, alive(job), leftover, alive(leftover))
	}
	if sid := sessionOf(m, b); pgrp(t, job) == sid {
		t.Fatalf("the job is in process group %d of its session: the test proves nothing", sid)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
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
	m.grace = 200 * time.Millisecond
	defer m.Close()
	id := running(t, run(t, m, ExecRequest{Cmd: "trap '' HUP TERM; sleep 300; echo", YieldTimeMs: ptr(200)}))
	pids := members(t, m, id)
	if len(pids) < 2 {
		t.Fatalf("want the shell and sleep, got %v", pids)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d survived Close", pid)
		}
	}
}
