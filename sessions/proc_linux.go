package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// MarkerEnv is set in every agent's environment to its session id. Every
// descendant inherits it, so a kill finds them all, even those that left the
// process group with setsid and were re-parented away from the supervisor.
const MarkerEnv = "ZWARM_SESSION_ID"

type procStat struct {
	pid   int
	ppid  int
	state byte
	start uint64
}

// readStat parses /proc/PID/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat: %w", pid, err)
	}
	return procStat{pid: pid, ppid: ppid, state: f[0][0], start: start}, nil
}

// refOf names a live process by pid and start time.
func refOf(pid int) (*ProcRef, error) {
	st, err := readStat(pid)
	if err != nil {
		return nil, err
	}
	return &ProcRef{PID: pid, Start: st.start}, nil
}

// Alive reports whether the very process r names still runs: same pid,
// same start time, not a zombie.
func (r *ProcRef) Alive() bool {
	if r == nil || r.PID <= 0 {
		return false
	}
	st, err := readStat(r.PID)
	if err != nil {
		return false
	}
	return st.start == r.Start && st.state != 'Z' && st.state != 'X'
}

// signal sends sig to r only if it is still the same process.
func (r *ProcRef) signal(sig syscall.Signal) error {
	if !r.Alive() {
		return os.ErrProcessDone
	}
	return unix.Kill(r.PID, sig)
}

// waitGone blocks until r has exited or ctx ends. It uses a pidfd, so it
// needs no polling and works for processes that are not our children.
func (r *ProcRef) waitGone(ctx context.Context) error {
	fd, err := unix.PidfdOpen(r.PID, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return r.pollGone(ctx)
	}
	defer unix.Close(fd)
	// The pid may have been reused between the caller's check and the open.
	if !r.Alive() {
		return nil
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := unix.Poll(fds, 50)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return r.pollGone(ctx)
		}
		if n > 0 || !r.Alive() {
			return nil
		}
	}
}

func (r *ProcRef) pollGone(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for r.Alive() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// listProcs reads every process's stat.
func listProcs() []procStat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procStat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// hasMarker reports whether pid's environment names session id.
func hasMarker(pid int, want []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

// sessionProcs lists the live processes of a session: those carrying its
// marker and the descendants of root (when root > 0). The caller itself is
// never listed.
func sessionProcs(id string, root int) []procStat {
	want := []byte(MarkerEnv + "=" + id)
	all := listProcs()
	children := map[int][]procStat{}
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p)
	}
	self := os.Getpid()
	seen := map[int]bool{}
	var out []procStat
	add := func(p procStat) {
		if p.pid == self || p.pid == root || seen[p.pid] || p.state == 'Z' || p.state == 'X' {
			return
		}
		seen[p.pid] = true
		out = append(out, p)
	}
	if root > 0 {
		stack := []int{root}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, c := range children[n] {
				add(c)
				stack = append(stack, c.pid)
			}
		}
	}
	for _, p := range all {
		if !seen[p.pid] && hasMarker(p.pid, want) {
			add(p)
		}
	}
	return out
}

// sweep SIGKILLs every process of the session until none is left. It is the
// last step of every stop: whatever escaped the process group dies here.
func sweep(ctx context.Context, id string, root int) error {
	for {
		procs := sessionProcs(id, root)
		if len(procs) == 0 {
			return nil
		}
		for _, p := range procs {
			ref := ProcRef{PID: p.pid, Start: p.start}
			ref.signal(unix.SIGKILL)
		}
		select {
		case <-ctx.Done():
			pids := make([]string, len(procs))
			for i, p := range procs {
				pids[i] = strconv.Itoa(p.pid)
			}
			return fmt.Errorf("processes of session %s still alive: %s", id, strings.Join(pids, " "))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// becomeSubreaper makes orphaned descendants re-parent to this process, so
// the supervisor can find and reap them.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// ProcessRef names a running process by pid and start time.
func ProcessRef(pid int) (*ProcRef, error) { return refOf(pid) }
