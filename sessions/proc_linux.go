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

// containment finds and stops the processes of one session: those in its
// cgroup, those carrying its marker, and the descendants of root (the
// supervisor, when it sweeps its own). The caller itself is never listed.
type containment struct {
	id     string
	root   int    // 0: no descendant walk
	cgroup string // "" when the session has none
}

// procs lists the live processes of the session.
func (c containment) procs() []procStat {
	want := []byte(MarkerEnv + "=" + c.id)
	all := listProcs()
	byPID := make(map[int]procStat, len(all))
	children := map[int][]procStat{}
	for _, p := range all {
		byPID[p.pid] = p
		children[p.ppid] = append(children[p.ppid], p)
	}
	self := os.Getpid()
	seen := map[int]bool{}
	var out []procStat
	add := func(p procStat) {
		if p.pid == self || p.pid == c.root || seen[p.pid] || p.state == 'Z' || p.state == 'X' {
			return
		}
		seen[p.pid] = true
		out = append(out, p)
	}
	for _, pid := range cgroupPIDs(c.cgroup) {
		if p, ok := byPID[pid]; ok {
			add(p)
		}
	}
	if c.root > 0 {
		stack := []int{c.root}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, ch := range children[n] {
				add(ch)
				stack = append(stack, ch.pid)
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

// sweep kills every process of the session until none is left: the cgroup
// at once with cgroup.kill, then whatever the marker and the process tree
// still find. It is the last step of every stop.
func (c containment) sweep(ctx context.Context) error {
	if err := killCgroup(ctx, c.cgroup); err != nil {
		return err
	}
	for {
		procs := c.procs()
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
			return fmt.Errorf("processes of session %s still alive: %s", c.id, strings.Join(pids, " "))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// ProcessRef names a running process by pid and start time.
func ProcessRef(pid int) (*ProcRef, error) { return refOf(pid) }

// procStartTime is when a process started, by the wall clock.
func procStartTime(pid int) (time.Time, error) {
	st, err := readStat(pid)
	if err != nil {
		return time.Time{}, err
	}
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			// Start times are in clock ticks since boot; Linux reports them
			// at USER_HZ, which is 100 on every architecture Go supports.
			const hz = 100
			return time.Unix(boot, 0).Add(time.Duration(st.start) * time.Second / hz), nil
		}
	}
	return time.Time{}, fmt.Errorf("no btime in /proc/stat")
}
