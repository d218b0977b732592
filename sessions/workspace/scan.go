package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A scan is what git status found untracked in a worktree, remembered
// beside it (scanFile) with a stamp of everything that answer depends on:
// every directory git's walk enters, the worktree's index, and each file
// ignore rules and config come from. While every stamp holds, the answer
// holds, and a diff of the worktree as it is needs no second walk of its
// files: in a large repository that walk costs as much as the diff.
//
// Why it can be trusted where git's own untracked cache cannot:
//   - it is kept where the worker cannot write (beside the worktree, not
//     in its git dir);
//   - a directory is judged by its ctime, which changes with any entry
//     made, removed or renamed in it and which no process can set (git
//     judges by the mtime, which touch sets back);
//   - a stamp within a moment of the scan is racy (a change in the same
//     clock tick would leave it as it was) and makes the scan not count;
//   - it is kept only on file systems known to stamp times from this
//     machine's clock in nanoseconds, and never across a mount point.
//
// A scan that does not hold costs nothing but the walk zwarm makes anyway.

// scanFile is where a worktree's scan is kept.
func scanFile(path string) string { return path + ".scan" }

// forget drops the scan of the worktree at path.
func forget(path string) { os.Remove(scanFile(path)) }

// intend adds what the scan found untracked to g's index as intended
// (git add -N): git diff then shows each as new, as staging it would.
func (s *scan) intend(ctx context.Context, g git) error {
	if len(s.untracked) == 0 {
		return nil
	}
	g.stdin, g.stdout = strings.NewReader(literally(s.untracked)), nil
	_, err := g.run(ctx, "add", "--intent-to-add", "--pathspec-from-file=-", "--pathspec-file-nul")
	return err
}

// scanVersion changes whenever what a scan holds, or how it is read,
// does.
const scanVersion = "zwarm scan 3"

// racyWithin is how close to the scan a stamp may be and still count,
// for file systems that stamp in nanoseconds: the kernel stamps from a
// clock that lags the real one by up to a tick. A stamp with no
// nanoseconds comes from a file system that keeps whole seconds (or two,
// FAT's), and is given racyCoarse.
const (
	racyWithin = 100 * time.Millisecond
	racyCoarse = 2 * time.Second
)

// stamp is what lstat says of a path that changes when it changes; zero
// for a path that is not there.
type stamp struct {
	dev, ino     uint64
	ctime, mtime int64 // nanoseconds
	size         int64
}

func stampOfStat(st *unix.Stat_t) stamp {
	return stamp{dev: st.Dev, ino: st.Ino, ctime: st.Ctim.Nano(), mtime: st.Mtim.Nano(), size: st.Size}
}

// stampOf stamps the file at path through its symlinks: what git reads
// through one changes with its target. stampDir stamps the directory at
// path itself, a symlink's own stamp should it be one.
func stampOf(path string) (stamp, error)  { return stampWith(unix.Stat, path) }
func stampDir(path string) (stamp, error) { return stampWith(unix.Lstat, path) }

func stampWith(stat func(string, *unix.Stat_t) error, path string) (stamp, error) {
	var st unix.Stat_t
	if err := stat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return stamp{}, nil
		}
		return stamp{}, err
	}
	return stampOfStat(&st), nil
}

// racy reports whether s was stamped too close to since (or after it)
// to tell a later change from the one it shows.
func (s stamp) racy(since time.Time) bool {
	if s == (stamp{}) {
		return false
	}
	within := racyWithin
	if s.ctime%int64(time.Second) == 0 {
		within = racyCoarse
	}
	return s.ctime > since.Add(-within).UnixNano()
}

// unsure is the stamp of a path stamped too close to its scan: it
// equals no stamp lstat makes, so a scan holding it does not hold, and
// the next walk reads the directory again.
var unsure = stamp{ctime: -1}

func (s stamp) String() string {
	if s == unsure {
		return "unsure"
	}
	return fmt.Sprintf("%d:%d:%d:%d:%d", s.dev, s.ino, s.ctime, s.mtime, s.size)
}

func parseStamp(s string) (stamp, bool) {
	if s == "unsure" {
		return unsure, true
	}
	f := strings.Split(s, ":")
	if len(f) != 5 {
		return stamp{}, false
	}
	var n [5]int64
	for i, v := range f {
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return stamp{}, false
		}
		n[i] = x
	}
	return stamp{dev: uint64(n[0]), ino: uint64(n[1]), ctime: n[2], mtime: n[3], size: n[4]}, true
}

// stamped is a path and its stamp.
type stamped struct {
	path  string
	stamp stamp
}

// scan is a remembered answer of git status.
type scan struct {
	key string
	// files are absolute: the index, config and ignore files (present or
	// not: one made later changes the answer too).
	files []stamped
	// dirs are relative to the worktree ("." its top).
	dirs []stamped
	// pruned are the directories the walk did not enter (ignored whole,
	// or brought along), relative to the worktree: with dirs, every
	// directory below one that did not change is known without reading
	// it again.
	pruned []string
	// spec is the pathspec the answer was given for (w.pathspec).
	spec []string
	// untracked is what git status listed untracked, ready to be named
	// to git literally (untrackedWithin).
	untracked []string
}

// scanKey sums what a scan's answer depends on besides its stamps: the
// paths brought along, and the environment by which git finds its
// config.
func (w *Worktree) scanKey() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", scanVersion, w.Path, w.admin(), w.own())
	for _, e := range w.Exclude {
		fmt.Fprintf(h, "exclude %s\x00", e)
	}
	// The git that answers, and what steers it: git's own variables
	// (config, pathspecs), and where it finds a user's config.
	prog, _ := gitPath()
	fmt.Fprintf(h, "git %s\x00", prog)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "XDG_CONFIG_HOME" || strings.HasPrefix(k, "GIT_") {
			fmt.Fprintf(h, "env %s\x00", kv)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// remembers reports whether scans can be trusted where the worktree is.
func (w *Worktree) remembers() bool {
	var fs unix.Statfs_t
	if err := unix.Statfs(w.Path, &fs); err != nil {
		return false
	}
	switch int64(fs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC:
		return true
	}
	return false
}

// recall is the worktree's scan if every one of its stamps still holds,
// else nil.
func (w *Worktree) recall() *scan {
	if s := w.load(); s != nil && s.holds(w.Path) {
		return s
	}
	return nil
}

// load reads the worktree's scan, whether it holds or not: nil if there
// is none, or none zwarm can use.
func (w *Worktree) load() *scan {
	if !w.remembers() {
		return nil
	}
	data, err := os.ReadFile(scanFile(w.Path))
	if err != nil {
		return nil
	}
	s, ok := decodeScan(string(data))
	if !ok || s.key != w.scanKey() {
		return nil
	}
	return s
}

// holds reports whether every stamp of the scan is what lstat says now.
// The directories are stamped relative to top, opened once, by a few
// goroutines at once: in a large tree each stat waits on the kernel more
// than on the CPU, and most of its work would be the path up to top.
func (s *scan) holds(top string) bool {
	for _, f := range s.files {
		if now, err := stampOf(f.path); err != nil || now != f.stamp {
			return false
		}
	}
	dir, err := os.Open(top)
	if err != nil {
		return false
	}
	defer dir.Close()
	fd := int(dir.Fd())
	workers := min(4, 1+len(s.dirs)/256)
	var held atomic.Bool
	held.Store(true)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			var st unix.Stat_t
			for j := i; j < len(s.dirs) && held.Load(); j += workers {
				d := s.dirs[j]
				if err := unix.Fstatat(fd, d.path, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || stampOfStat(&st) != d.stamp {
					held.Store(false)
				}
			}
		})
	}
	wg.Wait()
	return held.Load()
}

func (s *scan) encode() string {
	var b strings.Builder
	field := func(v string) { b.WriteString(v); b.WriteByte(0) }
	field(scanVersion)
	field(s.key)
	for _, list := range [][]stamped{s.files, s.dirs} {
		field(strconv.Itoa(len(list)))
		for _, p := range list {
			field(p.stamp.String())
			field(p.path)
		}
	}
	for _, list := range [][]string{s.pruned, s.spec, s.untracked} {
		field(strconv.Itoa(len(list)))
		for _, p := range list {
			field(p)
		}
	}
	return b.String()
}

// decodeScan reads what encode wrote; ok is false for anything else.
func decodeScan(data string) (s *scan, ok bool) {
	f := strings.Split(data, "\x00")
	if len(f) < 2 || f[0] != scanVersion || f[len(f)-1] != "" {
		return nil, false
	}
	s = &scan{key: f[1]}
	i := 2
	count := func() (int, bool) {
		if i >= len(f) {
			return 0, false
		}
		n, err := strconv.Atoi(f[i])
		i++
		return n, err == nil && n >= 0 && i+n <= len(f)
	}
	for _, list := range []*[]stamped{&s.files, &s.dirs} {
		n, ok := count()
		if !ok || i+2*n > len(f) {
			return nil, false
		}
		for range n {
			st, ok := parseStamp(f[i])
			if !ok {
				return nil, false
			}
			*list = append(*list, stamped{f[i+1], st})
			i += 2
		}
	}
	for _, list := range []*[]string{&s.pruned, &s.spec, &s.untracked} {
		n, ok := count()
		if !ok {
			return nil, false
		}
		*list = append(*list, f[i:i+n]...)
		i += n
	}
	if i != len(f)-1 {
		return nil, false
	}
	return s, true
}
