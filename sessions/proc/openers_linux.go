package proc

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Opener is a process that has a file open.
type Opener struct {
	PID     int
	Command string // its command line, spaces between the arguments
}

// Openers lists, for each of files that is there, the processes that have
// it open, as /proc shows them: every process of this user (all of them,
// to root). A process of another user whose open files cannot be read is
// not seen. A file is matched by its device and inode, not its name: a
// process names a file by the path it resolved.
func Openers(files []string) map[string][]Opener {
	type key struct{ dev, ino uint64 }
	want := map[key]string{}
	for _, f := range files {
		var st syscall.Stat_t
		if syscall.Lstat(f, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
			want[key{st.Dev, st.Ino}] = f
		}
	}
	out := map[string][]Opener{}
	if len(want) == 0 {
		return out
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	// Only a link that names a file with one of the wanted names is
	// looked at further: a readlink costs less than a stat, and most
	// processes hold nothing of the kind.
	names := map[string]bool{}
	for _, f := range want {
		names[base(f)] = true
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + e.Name() + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or another user's
		}
		seen := map[string]bool{}
		for _, fd := range fds {
			target, err := os.Readlink(dir + fd.Name())
			if err != nil || !names[base(strings.TrimSuffix(target, " (deleted)"))] {
				continue
			}
			var st syscall.Stat_t
			if syscall.Stat(dir+fd.Name(), &st) != nil {
				continue
			}
			if f, ok := want[key{st.Dev, st.Ino}]; ok && !seen[f] {
				seen[f] = true
				out[f] = append(out[f], Opener{PID: pid, Command: commandLine(pid)})
			}
		}
	}
	return out
}

func base(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// commandLine is pid's command line, "" when it cannot be read.
func commandLine(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
