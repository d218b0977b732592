package proc

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

type Stat struct {
	PID   int
	PPID  int
	State byte
	Start uint64
}

// ReadStat parses /proc/PID/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Stat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("malformed /proc/%d/stat: %w", pid, err)
	}
	return Stat{PID: pid, PPID: ppid, State: f[0][0], Start: start}, nil
}

// RefOf names a live process by pid and start time.
func RefOf(pid int) (*Ref, error) {
	st, err := ReadStat(pid)
	if err != nil {
		return nil, err
	}
	return &Ref{PID: pid, Start: st.Start}, nil
}

// Alive reports whether the very process r names still runs: same pid,
// same start time, not a zombie.
func (r *Ref) Alive() bool {
	if r == nil || r.PID <= 0 {
		return false
	}
	st, err := ReadStat(r.PID)
	if err != nil {
		return false
	}
	return st.Start == r.Start && st.State != 'Z' && st.State != 'X'
}

// Signal sends sig to r only if it is still the same process.
func (r *Ref) Signal(sig syscall.Signal) error {
	if !r.Alive() {
		return os.ErrProcessDone
	}
	return unix.Kill(r.PID, sig)
}

// WaitGone blocks until r has exited or ctx ends. It uses a pidfd, so it
// needs no polling and works for processes that are not our children.
func (r *Ref) WaitGone(ctx context.Context) error {
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

func (r *Ref) pollGone(ctx context.Context) error {
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
func List() []Stat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]Stat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := ReadStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// HasMarker reports whether pid's environment names session id.
func HasMarker(pid int, want []byte) bool {
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

// A Scope finds and stops the processes of one session: those in its
// cgroup, those carrying its marker, and the descendants of root (the
// supervisor, when it sweeps its own). The caller itself is never listed.
type Scope struct {
	ID     string
	Root   int    // 0: no descendant walk
	Cgroup string // "" when the session has none
}

// Procs lists the live processes of the session.
func (c Scope) Procs() []Stat {
	want := []byte(MarkerEnv + "=" + c.ID)
	all := List()
	byPID := make(map[int]Stat, len(all))
	children := map[int][]Stat{}
	for _, p := range all {
		byPID[p.PID] = p
		children[p.PPID] = append(children[p.PPID], p)
	}
	self := os.Getpid()
	seen := map[int]bool{}
	var out []Stat
	add := func(p Stat) {
		if p.PID == self || p.PID == c.Root || seen[p.PID] || p.State == 'Z' || p.State == 'X' {
			return
		}
		seen[p.PID] = true
		out = append(out, p)
	}
	for _, pid := range CgroupPIDs(c.Cgroup) {
		if p, ok := byPID[pid]; ok {
			add(p)
		}
	}
	if c.Root > 0 {
		stack := []int{c.Root}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, ch := range children[n] {
				add(ch)
				stack = append(stack, ch.PID)
			}
		}
	}
	for _, p := range all {
		if !seen[p.PID] && HasMarker(p.PID, want) {
			add(p)
		}
	}
	return out
}

// Sweep kills every process of the session until none is left: the cgroup
// at once with cgroup.kill, then whatever the marker and the process tree
// still find. It is the last step of every stop.
func (c Scope) Sweep(ctx context.Context) error {
	if err := KillCgroup(ctx, c.Cgroup); err != nil {
		return err
	}
	for {
		procs := c.Procs()
		if len(procs) == 0 {
			return nil
		}
		for _, p := range procs {
			ref := Ref{PID: p.PID, Start: p.Start}
			ref.Signal(unix.SIGKILL)
		}
		select {
		case <-ctx.Done():
			pids := make([]string, len(procs))
			for i, p := range procs {
				pids[i] = strconv.Itoa(p.PID)
			}
			return fmt.Errorf("processes of session %s still alive: %s", c.ID, strings.Join(pids, " "))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// StartTime is when a process started, by the wall clock.
func StartTime(pid int) (time.Time, error) {
	st, err := ReadStat(pid)
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
			return time.Unix(boot, 0).Add(time.Duration(st.Start) * time.Second / hz), nil
		}
	}
	return time.Time{}, fmt.Errorf("no btime in /proc/stat")
}

// Alive reports whether anything of the session runs: a process in its
// cgroup (at any depth: cgroup.events counts the leaves) or one Procs finds.
func (c Scope) Alive() bool {
	return Populated(c.Cgroup) || len(c.Procs()) > 0
}

// SweepCgroup kills every process in a cgroup zwarm made and below it, and
// removes the cgroups; one already gone is swept.
func SweepCgroup(ctx context.Context, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := KillCgroup(ctx, dir); err != nil {
		return err
	}
	return RemoveCgroup(dir)
}

// PIDList is " (pid 1 2 3)" for ps, "" for none, for a message.
func PIDList(ps []Stat) string {
	if len(ps) == 0 {
		return ""
	}
	pids := make([]string, len(ps))
	for i, p := range ps {
		pids[i] = strconv.Itoa(p.PID)
	}
	return " (pid " + strings.Join(pids, " ") + ")"
}
