package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Opener is a process that has a file open, or works in a directory.
type Opener struct {
	PID     int
	Comm    string    // its name, as the kernel has it ("git")
	Command string    // its command line, spaces between the arguments
	Start   time.Time // when it started, to the second
}

// Use is what /proc says of some files and directories.
type Use struct {
	// Open are the processes that have each file open, by the path
	// asked about.
	Open map[string][]Opener
	// Within are the processes of the name asked about that work within
	// one of the directories: their working directory, a path their
	// command line or their environment names, is one of them or below
	// it; or where they work could not be read.
	Within []Opener
	// Unseen counts the processes of this user (of any user, to root)
	// whose open files could not be read: what they hold is not known.
	Unseen int
}

// Users finds the processes that have one of files open, and those whose
// name starts with comm that work within one of dirs. Nothing is asked of
// the files' own file systems (a stalled mount would hang it): a process's
// open file is matched by the inode /proc gives for it, and where it works
// by the paths /proc gives. A process of another user whose files cannot
// be read is not seen. The error is /proc's, when it cannot be read at all.
func Users(ctx context.Context, files, dirs []string, comm string) (Use, error) {
	want := map[uint64][]string{}
	names := map[string]bool{}
	for _, f := range files {
		var st syscall.Stat_t
		if syscall.Lstat(f, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
			want[st.Ino] = append(want[st.Ino], f)
			names[filepath.Base(f)] = true
		}
	}
	var places []string
	for _, d := range dirs {
		places = append(places, filepath.Clean(d))
		if r, err := filepath.EvalSymlinks(d); err == nil && r != filepath.Clean(d) {
			places = append(places, r)
		}
	}
	use := Use{Open: map[string][]Opener{}}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return use, fmt.Errorf("read /proc: %w", err)
	}
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
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
		opened, err := openedBy(dir, names, want)
		if err != nil {
			if unseen(dir, err, uid) {
				use.Unseen++
			}
			continue
		}
		name := readTrimmed(dir + "comm")
		within := comm != "" && strings.HasPrefix(name, comm) && worksWithin(dir, places, uid)
		if len(opened) == 0 && !within {
			continue
		}
		o := Opener{PID: pid, Comm: name, Command: commandLine(pid)}
		o.Start, _ = StartTime(pid)
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
// those wanted, by their inode: looked at only for a link of a wanted
// name, as a readlink costs less and most processes hold nothing of the
// kind.
func openedBy(dir string, names map[string]bool, want map[uint64][]string) ([]string, error) {
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
		info, _ := os.ReadFile(dir + "fdinfo/" + fd.Name())
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "ino:"); ok {
				if ino, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
					opened = append(opened, want[ino]...)
				}
			}
		}
	}
	return opened, nil
}

// worksWithin says whether a process works within one of places: its
// working directory, or a path its command line or environment names
// (git --git-dir=…, GIT_DIR=…), is one of them or below it. One whose
// working directory or environment cannot be read may: it does.
func worksWithin(dir string, places []string, uid int) bool {
	cwd, err := os.Readlink(dir + "cwd")
	if err != nil {
		return unseen(dir, err, uid)
	}
	env, err := os.ReadFile(dir + "environ")
	if err != nil {
		return unseen(dir, err, uid)
	}
	args, _ := os.ReadFile(dir + "cmdline")
	named := []string{cwd}
	for _, b := range append(bytes.Split(env, []byte{0}), bytes.Split(args, []byte{0})...) {
		s := string(b)
		if i := strings.IndexByte(s, '='); i >= 0 {
			s = s[i+1:]
		}
		if strings.HasPrefix(s, "/") {
			named = append(named, filepath.Clean(s))
		}
	}
	for _, p := range named {
		for _, d := range places {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
	}
	return false
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

func readTrimmed(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// commandLine is pid's command line, "" when it cannot be read.
func commandLine(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
