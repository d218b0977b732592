package shell

import (
	"errors"
	"fmt"
	"sort"
	"syscall"
	"time"
)

const (
	termGrace = 2 * time.Second  // between SIGTERM and SIGKILL
	killWait  = 10 * time.Second // for SIGKILLed processes to vanish, on a busy machine too
	pollEvery = 10 * time.Millisecond
)

// Close ends the run's processes: every session the manager started, its
// whole process group and session, including processes left behind by
// commands that already exited. It sends SIGHUP (what a closing terminal
// sends, and what ends an interactive shell) with SIGTERM, then SIGKILL to
// whatever is left after a short grace, and waits for every owner goroutine.
// Close is idempotent; later Exec and WriteStdin calls return ErrClosed.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	sids := map[int]bool{}
	var procs []*process
	for _, p := range m.procs {
		sids[p.pid] = true
		procs = append(procs, p)
	}
	for _, sid := range m.lingering {
		sids[sid] = true
	}
	m.mu.Unlock()

	gone := func() bool {
		for _, p := range procs {
			if !p.exited() {
				return false
			}
		}
		return len(sessionMembers(sids)) == 0
	}
	m.signal(sids, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGCONT)
	if !waitUntil(gone, m.grace) {
		m.signal(sids, syscall.SIGKILL)
		waitUntil(gone, killWait)
	}
	m.owners.Wait()
	if left := sessionMembers(sids); len(left) > 0 {
		var pids []int
		for _, members := range left {
			pids = append(pids, members...)
		}
		sort.Ints(pids)
		return fmt.Errorf("close shell sessions: processes %v survived SIGKILL", pids)
	}
	return nil
}

// signal sends each signal to the process group of every session (the
// session leader's pid is its group's id) and to every other member of the
// session, which job control may have put in groups of their own.
func (m *Manager) signal(sids map[int]bool, sigs ...syscall.Signal) {
	members := sessionMembers(sids)
	for _, sig := range sigs {
		for sid := range sids {
			m.kill(-sid, sig)
			for _, pid := range members[sid] {
				m.kill(pid, sig)
			}
		}
	}
}

func (m *Manager) kill(pid int, sig syscall.Signal) {
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		m.log.Warn("shell: signal", "pid", pid, "signal", sig, "err", err)
	}
}

// waitUntil polls cond until it holds or d passes, and reports whether it held.
func waitUntil(cond func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}
