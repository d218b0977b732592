package proc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Opener is a process that has a file open, or works in a directory.
type Opener struct {
	PID     int
	Comm    string // its name, as the kernel has it ("git")
	Command string // its command line, spaces between the arguments
}

// Use is what /proc says of some files and directories.
type Use struct {
	// Open are the processes that have each file open, by the path
	// asked about.
	Open map[string][]Opener
	// Within are the processes whose working directory is one of the
	// directories or below it.
	Within []Opener
	// Unseen counts the processes of this user (of any user, to root)
	// whose open files could not be read: what they hold is not known.
	Unseen int
	// Unplaced are the processes of this user (of any, to root) whose
	// working directory could not be read.
	Unplaced []Opener
}

// Users finds the processes that have one of files open (matched by
// device and inode, not name: a process names a file by the path it
// resolved), and those working within one of dirs. A process of another
// user whose open files cannot be read is not seen. The error is /proc's,
// when it cannot be read at all.
func Users(ctx context.Context, files, dirs []string) (Use, error) {
	type key struct{ dev, ino uint64 }
	want := map[key][]string{}
	names := map[string]bool{}
	for _, f := range files {
		var st syscall.Stat_t
		if syscall.Lstat(f, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
			k := key{st.Dev, st.Ino}
			want[k] = append(want[k], f)
			names[filepath.Base(f)] = true
		}
	}
	var real []string
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			real = append(real, r)
		}
	}
	use := Use{Open: map[string][]Opener{}}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return use, fmt.Errorf("read /proc: %w", err)
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return use, fmt.Errorf("/proc shows no processes' open files: %w", err)
	}
	uid := os.Getuid()
	for _, e := range ents {
		if ctx.Err() != nil {
			return use, ctx.Err()
		}
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + e.Name() + "/"
		opened, err := openedBy(dir, names, func(st *syscall.Stat_t) []string { return want[key{st.Dev, st.Ino}] })
		if err != nil {
			if unseen(dir, err, uid) {
				use.Unseen++
			}
			continue
		}
		within, unplaced := false, false
		if len(real) > 0 {
			cwd, err := os.Readlink(dir + "cwd")
			unplaced = err != nil && unseen(dir, err, uid)
			for _, d := range real {
				within = within || err == nil && (cwd == d || strings.HasPrefix(cwd, d+"/"))
			}
		}
		if len(opened) == 0 && !within && !unplaced {
			continue
		}
		o := Opener{PID: pid, Comm: comm(pid), Command: commandLine(pid)}
		if unplaced {
			use.Unplaced = append(use.Unplaced, o)
		}
		seen := map[string]bool{}
		for _, f := range opened {
			if !seen[f] {
				seen[f] = true
				use.Open[f] = append(use.Open[f], o)
			}
		}
		if within {
			use.Within = append(use.Within, o)
		}
	}
	return use, nil
}

// openedBy lists the files of a process (its /proc dir) that are one of
// those wanted: by name first, as a readlink costs less than a stat and
// most processes hold nothing of the kind, then by the file itself.
func openedBy(dir string, names map[string]bool, wanted func(*syscall.Stat_t) []string) ([]string, error) {
	fds, err := os.ReadDir(dir + "fd")
	if err != nil {
		return nil, err
	}
	var opened []string
	for _, fd := range fds {
		target, err := os.Readlink(dir + "fd/" + fd.Name())
		if err != nil || !names[filepath.Base(strings.TrimSuffix(target, " (deleted)"))] {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(dir+"fd/"+fd.Name(), &st) == nil {
			opened = append(opened, wanted(&st)...)
		}
	}
	return opened, nil
}

// unseen says whether a process's file that could not be read hides
// something: not when the process is gone, nor when it is another user's.
func unseen(dir string, err error, uid int) bool {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return false
	}
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil {
		return false // gone meanwhile
	}
	return uid == 0 || int(st.Uid) == uid
}

func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// commandLine is pid's command line, "" when it cannot be read.
func commandLine(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
