package proc

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// SupervisorsOf finds the supervisor processes of a session by their
// command line (`zwarm __supervise ... ID`), for when the record that
// names them cannot be read.
func SupervisorsOf(id string) []int {
	var found []Stat
	for _, p := range List() {
		if IsSupervisorOf(p.PID, id) {
			found = append(found, p)
		}
	}
	// A supervisor's child caught between fork and exec (a git command,
	// the agent) still reads as its parent: it is not a second one.
	var out []int
	for _, p := range found {
		if !slices.ContainsFunc(found, func(q Stat) bool { return q.PID == p.PPID }) {
			out = append(out, p.PID)
		}
	}
	return out
}

// IsSupervisorOf reports whether pid is `zwarm __supervise ... ID`: a
// record names its supervisor by pid and start time, and a record can be
// written by anyone who may write the state dir, so a pid from it is
// signalled only if its command line says it is the session's supervisor.
func IsSupervisorOf(pid int, id string) bool {
	if pid == os.Getpid() {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
	if len(args) < 2 || args[len(args)-1] != id {
		return false
	}
	return slices.Contains(args, "__supervise")
}
