package shell

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sessionMembers lists, per session id in sids, the live processes of that
// session, from /proc. Zombies are dead already and left out.
func sessionMembers(sids map[int]bool) map[int][]int {
	members := map[int][]int{}
	if len(sids) == 0 {
		return members
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return members
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, sid, ok := readStat(pid)
		if ok && state != 'Z' && sids[sid] {
			members[sid] = append(members[sid], pid)
		}
	}
	return members
}

// readStat reads a process's state and session id from /proc/PID/stat.
func readStat(pid int) (state byte, sid int, ok bool) {
	f, err := readStatFields(pid)
	if err != nil || len(f[0]) == 0 {
		return 0, 0, false
	}
	sid, err = strconv.Atoi(f[3])
	return f[0][0], sid, err == nil
}

// readStatFields returns the fields of /proc/PID/stat from the third on:
// state, ppid, pgrp, session, ... The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func readStatFields(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return f, nil
}

// join makes the process start in the spec's cgroup, if it has one.
func (s spec) join(attrs *syscall.SysProcAttr) {
	if s.cgroup != nil {
		attrs.UseCgroupFD, attrs.CgroupFD = true, int(s.cgroup.Fd())
	}
}
