package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/store"
)

// A sweep is remembered beside the worktree (sweptFile), where the worker
// cannot write: each directory it read and found no special file in, with
// the directory's stamp when read and its subdirectories. A directory
// whose stamp still holds has had no entry made, removed or renamed in it
// since: its ctime, which no process can set back, would have changed
// (scan.go says more). It holds no special file now, and the next sweep
// does not read it, but stamps its subdirectories in turn. In a
// repository of 20,000 files in 2,400 directories, a turn's commit then
// stats each directory where it read them all.
//
// What a sweep cannot vouch for is not remembered, and is read every
// time: a directory it removed something from (that changed its stamp),
// could not read, stamped too close to the sweep (racy), or found on
// another file system than the top's, or on one whose stamps are not
// trusted (remembers).

// sweptFile is where a worktree's last sweep is kept.
func sweptFile(path string) string { return path + ".swept" }

// sweptVersion changes whenever what the record holds, or how it is
// read, does.
const sweptVersion = "zwarm swept 1"

// sweptDir is a directory a sweep read: its stamp then, and the names of
// its subdirectories.
type sweptDir struct {
	stamp   stamp
	subdirs []string
}

// holds reports whether the directory name in at is still the one
// stamped was.
func (s *sweeper) holds(at int, name string, was stamp, follow bool) bool {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	var st unix.Stat_t
	return unix.Fstatat(at, name, &st, flags) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && stampOfStat(&st) == was
}

// stampOpen stamps the directory open at fd before it is read, and says
// whether the sweep may remember it by that stamp.
func (s *sweeper) stampOpen(fd int) (stamp, bool) {
	if s.seen == nil {
		return stamp{}, false
	}
	s.read = true
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Dev != s.root {
		return stamp{}, false
	}
	now := stampOfStat(&st)
	return now, !now.racy(s.began)
}

// remembering makes s a sweep of w that reads only what changed since
// the last one, and remembers what it read: nothing is remembered where
// stamps cannot be trusted.
func (w *Worktree) remembering(s *sweeper) {
	var top unix.Stat_t
	if unix.Stat(w.Path, &top) != nil || !w.remembers() {
		return
	}
	s.began, s.root, s.seen = time.Now(), top.Dev, map[string]sweptDir{}
	data, err := os.ReadFile(sweptFile(w.Path))
	if err == nil {
		s.known = decodeSwept(string(data), w.Path)
	}
}

// keepSwept remembers what the sweep s found, unless it is what the last
// one did, as the scan is kept: one that cannot be written costs the next
// sweep a read of everything.
func (w *Worktree) keepSwept(s *sweeper) {
	if s.seen == nil || !s.read && len(s.seen) == len(s.known) {
		return
	}
	store.WriteFileAtomic("", sweptFile(w.Path), []byte(encodeSwept(s.seen, w.Path)))
}

// encodeSwept is the record of dirs for the worktree at top: NUL-ended
// fields, the version and top, then each directory's path, stamp and
// subdirectories ('/' between names, which no name holds), then their
// count.
func encodeSwept(dirs map[string]sweptDir, top string) string {
	var b strings.Builder
	field := func(v string) { b.WriteString(v); b.WriteByte(0) }
	field(sweptVersion)
	field(top)
	for rel, d := range dirs {
		field(rel)
		field(d.stamp.String())
		field(strings.Join(d.subdirs, "/"))
	}
	field(strconv.Itoa(len(dirs)))
	return b.String()
}

// decodeSwept reads what encodeSwept wrote for top; nil for anything
// else.
func decodeSwept(data, top string) map[string]sweptDir {
	f := strings.Split(data, "\x00")
	if len(f) < 4 || f[0] != sweptVersion || f[1] != top || f[len(f)-1] != "" || (len(f)-4)%3 != 0 {
		return nil
	}
	n, err := strconv.Atoi(f[len(f)-2])
	if err != nil || n != (len(f)-4)/3 {
		return nil
	}
	dirs := make(map[string]sweptDir, n)
	for i := 2; i < len(f)-2; i += 3 {
		st, ok := parseStamp(f[i+1])
		if !ok || st == unsure || !filepath.IsLocal(f[i]) {
			return nil
		}
		var subdirs []string
		if f[i+2] != "" {
			subdirs = strings.Split(f[i+2], "/")
		}
		for _, name := range subdirs {
			if name == "" || name == "." || name == ".." {
				return nil // no directory's name: the walk would leave the worktree
			}
		}
		dirs[f[i]] = sweptDir{stamp: st, subdirs: subdirs}
	}
	return dirs
}
