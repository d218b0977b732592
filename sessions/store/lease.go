package store

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The lease scheme (scheme.go says when a state dir uses it).
//
// A lock is the file at its path, which exists only while it is held. It
// is taken by writing a record of its holder to a file of a unique name
// beside it and hard-linking that into place: link(2) is performed by the
// file server, atomically, and fails if the name exists; and the lock
// file is whole from the moment it appears. This is the way open(2)
// describes and NFS-safe lockfile implementations use, rather than
// O_CREAT|O_EXCL, which NFSv2 does not perform atomically and which shows
// the file empty until its record is written. Over NFS a link whose reply
// was lost is sent again and answered EEXIST though it was made, so after
// a failed link the lock is ours if the file in place is our file (the
// unique file's link count went to 2: the same inode). A file system that
// cannot link (some SMB servers) gets O_CREAT|O_EXCL, and its readers may
// find the record half-written: such a file, as any record that cannot be
// read, is judged by its age alone.
//
// The record names its holder (host, boot, pid namespace, pid and start
// time, command, what it locks), a random token, and its lease. The
// holder touches the file every fifth of its lease (utimensat without a
// time, which an NFS client sends as "the server's time"), so its
// modification time says when its holder was last alive. A waiter breaks a
// lock whose modification time is older than its lease and a margin, both
// times as the file server sets them: "now" is the modification time of
// the waiter's own unique file, touched the same way, so no machine's
// clock is compared with another's. Attributes are read through a fresh
// open, which makes an NFS client ask the server (close-to-open) instead
// of answering from its cache.
//
// Breaking is done by one waiter at a time: it takes a second lock,
// <path>.break (its unique file linked there), looks again that the lock
// is the file it judged, not touched since, renames it away (atomic: of
// two waiters that judged the same lock stale, one moves it, the other
// finds nothing to move) and checks that what it moved is the file it
// judged; if not (the holder let go and another took the lock in
// between), it is put back. A breaker that dies leaves <path>.break,
// broken the same way once it is older than a lease.
//
// A lock is let go by removing the file, if it is still ours: the same
// inode, holding our token. A holder that stalled past its lease (stopped,
// or cut off from the server) may have lost it: its renewal finds another
// file in place and stops, and its release leaves that file alone (but
// for the moment between its look and the removal: only a holder already
// past its lease can be caught in it).

// leaseTime is how long a lock lasts without renewal; leaseMargin is how
// much longer a waiter gives it before breaking it, for a touch late to
// reach the server and times rounded by its file system. A supervisor
// killed with its lock holds up the next one (supervisor's handoverWait,
// 30 s) at most their sum.
var (
	leaseTime   = 15 * time.Second
	leaseMargin = 5 * time.Second
)

// maxLease bounds the lease a waiter believes a record: one that claims
// more must not hold a lock forever. A record that cannot be read is
// given leaseTime.
const maxLease = 10 * time.Minute

// leasePause is the longest pause between a waiter's attempts: each costs
// the file server a link and an open.
const leasePause = 50 * time.Millisecond

// leaseRecord is what a lock file holds, as one line of JSON.
type leaseRecord struct {
	Host    string `json:"host"`
	Boot    string `json:"boot,omitempty"`
	PIDNS   string `json:"pid_ns,omitempty"`
	PID     int    `json:"pid"`
	Start   uint64 `json:"start,omitempty"` // clock ticks after boot, as /proc/<pid>/stat says
	Command string `json:"command,omitempty"`
	What    string `json:"what,omitempty"`
	Token   string `json:"token"`
	LeaseMS int64  `json:"lease_ms"`
}

// self is this process as a lock's holder.
var self = sync.OnceValue(func() leaseRecord {
	r := leaseRecord{PID: os.Getpid()}
	r.Host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		r.Boot = strings.TrimSpace(string(b))
	}
	r.PIDNS, _ = os.Readlink("/proc/self/ns/pid")
	r.Start, _, _ = procStart(r.PID)
	return r
})

// local says whether r's holder is a process of this machine whose pid
// means something here.
func (r leaseRecord) local() bool {
	me := self()
	return r.Host == me.Host && r.Boot == me.Boot && r.PIDNS == me.PIDNS
}

// holder is r as a waiter is told of it: a holder on this machine that is
// gone, or a record that cannot be read, is "another process".
func (r leaseRecord) holder(ok bool) LockHolder {
	if !ok || r.PID <= 0 {
		return LockHolder{}
	}
	if r.local() {
		if r.gone() {
			return LockHolder{}
		}
		return LockHolder{PID: r.PID, Command: r.Command}
	}
	return LockHolder{PID: r.PID, Command: r.Command, Host: r.Host}
}

// gone says whether r's holder, a process of this machine, has exited:
// no process has its pid and start time (a zombie has exited too).
func (r leaseRecord) gone() bool {
	start, state, err := procStart(r.PID)
	return err != nil || r.Start != 0 && start != r.Start || state == 'Z' || state == 'X'
}

// lease is how long r's holder said its lock lasts without renewal.
func (r leaseRecord) lease(ok bool) time.Duration {
	if !ok || r.LeaseMS <= 0 {
		return leaseTime
	}
	return min(time.Duration(r.LeaseMS)*time.Millisecond, maxLease)
}

func parseLease(data []byte) (leaseRecord, bool) {
	var r leaseRecord
	if json.Unmarshal(bytes.TrimSpace(data), &r) != nil || r.Token == "" {
		return leaseRecord{}, false
	}
	return r, true
}

// fileID is one file, at one modification.
type fileID struct {
	dev, ino uint64
	mtime    int64
}

func idOf(st *unix.Stat_t) fileID {
	return fileID{dev: uint64(st.Dev), ino: st.Ino, mtime: st.Mtim.Nano()}
}

func (a fileID) sameFile(b fileID) bool { return a.dev == b.dev && a.ino == b.ino }

// freshStat opens path (never through a symlink) and reads its attributes
// and, with data, its first 4 KiB: the open makes an NFS client ask the
// server for them.
func freshStat(path string, data bool) (unix.Stat_t, []byte, error) {
	var st unix.Stat_t
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	}
	if err == unix.ELOOP {
		return st, nil, &SymlinkError{Path: path}
	}
	if err != nil {
		return st, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return st, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if !data {
		return st, nil, nil
	}
	buf := make([]byte, 4096)
	n, _ := unix.Pread(fd, buf, 0)
	return st, buf[:max(n, 0)], nil
}

// vanished says whether err is of a file that is gone: removed, or, over
// NFS, removed by another client since this one looked it up (ESTALE).
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESTALE)
}

// touch sets path's times to now as its file system sets them: the
// server's clock on a network file system.
func touch(path string) error {
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, nil, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "touch", Path: path, Err: err}
	}
	return nil
}

// sibling is a name beside the lock at path for this taker's use:
// ".<name>.<token>" or ".<name>.<kind>.<token>".
func sibling(path, kind, token string) string {
	name := "." + strings.TrimPrefix(filepath.Base(path), ".")
	if kind != "" {
		name += "." + kind
	}
	return filepath.Join(filepath.Dir(path), name+"."+token)
}

func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// leaseTaker takes one lock: its unique file stays while it waits.
type leaseTaker struct {
	root, path string
	rec        leaseRecord
	tmp        string // the unique file, linked into place to take the lock
	tmpID      fileID
	excl       bool // the file system cannot link: O_CREAT|O_EXCL instead
	mine       fileID
	brkID      fileID    // the break lock this taker made (excl)
	next       time.Time // when the lock in place may first be stale
	holder     LockHolder
}

// newLeaseTaker writes this process's record for the lock at path to its
// unique file.
func newLeaseTaker(root, path, what string) (*leaseTaker, error) {
	rec := self()
	rec.Command, rec.What, rec.Token, rec.LeaseMS = holderCommand(), what, newToken(), leaseTime.Milliseconds()
	t := &leaseTaker{root: root, path: path, rec: rec, tmp: sibling(path, "", rec.Token)}
	data, err := t.record()
	if err != nil {
		return nil, err
	}
	f, err := OpenFile(root, t.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FilePerm)
	if err != nil {
		return nil, err
	}
	werr := writeRecord(f, data)
	var st unix.Stat_t
	serr := unix.Fstat(int(f.Fd()), &st)
	cerr := f.Close() // over NFS the record reaches the server here
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(t.tmp)
		return nil, err
	}
	t.tmpID = idOf(&st)
	return t, nil
}

// writeRecord writes a lock's record to its new file f. On a full disk
// the file stays empty: a lock is still taken (a supervisor records its
// outcome on a full disk, the space it kept for that given back under the
// lock), and an empty lock file is one of an unknown holder, judged by its
// age as any record that cannot be read.
func writeRecord(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return f.Truncate(0)
	}
	return err
}

func (t *leaseTaker) record() ([]byte, error) {
	data, err := json.Marshal(t.rec)
	return append(data, '\n'), err
}

// close removes the unique file: taken, the lock is its other link.
func (t *leaseTaker) close() { unix.Unlink(t.tmp) }

// try takes the lock if it is free, or stale (then it is broken first).
func (t *leaseTaker) try() (bool, error) {
	got, err := t.place()
	if got || err != nil {
		return got, err
	}
	st, data, err := freshStat(t.path, true)
	if vanished(err) {
		return t.place() // let go meanwhile
	}
	if err != nil {
		return false, err
	}
	if idOf(&st).sameFile(t.tmpID) {
		t.mine = t.tmpID
		return true, nil // our link was made; its reply was lost
	}
	rec, ok := parseLease(data)
	t.holder = rec.holder(ok)
	if time.Now().Before(t.next) {
		return false, nil
	}
	stale, err := t.judge(&st, rec.lease(ok))
	if err != nil || !stale {
		return false, err
	}
	t.breakStale(idOf(&st))
	return t.place()
}

// place makes the lock file, if there is none.
func (t *leaseTaker) place() (bool, error) {
	if t.excl {
		return t.create()
	}
	// The lock is the unique file under another name, with the unique
	// file's time: touched last when this taker judged a lock, perhaps
	// nearly a lease and a margin ago. Linked as it is, it would look
	// stale at once, and another waiter could break it and hold the lock
	// too until this taker's first renewal.
	if err := touch(t.tmp); err != nil {
		return false, err
	}
	err := unix.Link(t.tmp, t.path)
	switch err {
	case nil:
		t.mine = t.tmpID
		return true, nil
	case unix.EEXIST, unix.EINTR:
		return false, nil
	case unix.EPERM, unix.EOPNOTSUPP, unix.ENOSYS:
		// No hard links here (EPERM is link(2)'s word for it).
		t.excl = true
		return t.create()
	}
	return false, &fs.PathError{Op: "link", Path: t.path, Err: err}
}

// create makes the lock file with O_CREAT|O_EXCL and writes the record.
func (t *leaseTaker) create() (bool, error) {
	data, err := t.record()
	if err != nil {
		return false, err
	}
	f, err := OpenFile(t.root, t.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FilePerm)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	werr := writeRecord(f, data)
	var st unix.Stat_t
	serr := unix.Fstat(int(f.Fd()), &st)
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(t.path)
		return false, err
	}
	t.mine = idOf(&st)
	return true, nil
}

// serverNow is the time as the lock's file system sets it: the
// modification time of the unique file, just touched.
func (t *leaseTaker) serverNow() (int64, error) {
	if err := touch(t.tmp); err != nil {
		return 0, err
	}
	st, _, err := freshStat(t.tmp, false)
	if err != nil {
		return 0, err
	}
	return st.Mtim.Nano(), nil
}

// judge says whether the lock file st, whose holder promised lease, is
// stale: not touched for longer than lease and the margin, by the file
// server's clock. If not, it says when it may next be.
func (t *leaseTaker) judge(st *unix.Stat_t, lease time.Duration) (bool, error) {
	now, err := t.serverNow()
	if err != nil {
		return false, err
	}
	age := time.Duration(now - st.Mtim.Nano())
	limit := lease + leaseMargin
	if age > limit {
		return true, nil
	}
	t.next = time.Now().Add(min(limit-age, limit))
	return false, nil
}

// breakStale moves the stale lock seen out of the way, under the break
// lock, if it is still that file untouched.
func (t *leaseTaker) breakStale(seen fileID) {
	brk := t.path + ".break"
	if !t.takeBreak(brk) {
		return
	}
	defer t.dropBreak(brk)
	st, _, err := freshStat(t.path, false)
	if err != nil || idOf(&st) != seen {
		return // let go, renewed or taken since it was judged
	}
	removeIfSame(t.path, seen, sibling(t.path, "broken", t.rec.Token))
}

// removeIfSame removes path if it is the file seen, unchanged: it is
// renamed to trash (one of two removers moves it), and put back if what
// was moved turns out to be another file.
func removeIfSame(path string, seen fileID, trash string) bool {
	if unix.Rename(path, trash) != nil {
		return false
	}
	st, _, err := freshStat(trash, false)
	if err == nil && idOf(&st) == seen {
		unix.Unlink(trash)
		return true
	}
	// Another file took its place between the look and the rename: it
	// goes back, unless the name was taken again meanwhile (then the
	// holder of the moved file finds it lost at its next renewal).
	unix.Link(trash, path)
	unix.Unlink(trash)
	return false
}

// takeBreak takes the break lock brk, breaking one a dead breaker left.
func (t *leaseTaker) takeBreak(brk string) bool {
	if t.excl {
		f, err := OpenFile(t.root, brk, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FilePerm)
		if err == nil {
			var st unix.Stat_t
			unix.Fstat(int(f.Fd()), &st)
			f.Close()
			t.brkID = idOf(&st)
			return true
		}
		if !errors.Is(err, fs.ErrExist) {
			return false
		}
	} else {
		if touch(t.tmp) != nil { // fresh, as in place
			return false
		}
		switch err := unix.Link(t.tmp, brk); err {
		case nil:
			t.brkID = t.tmpID
			return true
		case unix.EEXIST:
		default:
			return false
		}
	}
	st, _, err := freshStat(brk, false)
	if err != nil {
		return false
	}
	if !t.excl && idOf(&st).sameFile(t.tmpID) {
		t.brkID = t.tmpID
		return true
	}
	// Breaking takes moments: a break lock older than a lease was left
	// by a breaker that died.
	if now, err := t.serverNow(); err == nil && time.Duration(now-st.Mtim.Nano()) > leaseTime+leaseMargin {
		removeIfSame(brk, idOf(&st), sibling(brk, "broken", t.rec.Token))
	}
	return false
}

// dropBreak lets go of the break lock, if it is still this taker's.
func (t *leaseTaker) dropBreak(brk string) {
	if st, _, err := freshStat(brk, false); err == nil && idOf(&st).sameFile(t.brkID) {
		unix.Unlink(brk)
	}
}

// leaseHeld is a lease lock held, renewed until it is let go.
type leaseHeld struct {
	path, token string
	id          fileID
	stop, done  chan struct{}
}

// held starts renewing the lock t took.
func (t *leaseTaker) held() *leaseHeld {
	l := &leaseHeld{path: t.path, token: t.rec.Token, id: t.mine, stop: make(chan struct{}), done: make(chan struct{})}
	go l.renew(leaseTime / 5)
	return l
}

// renew touches the lock file every interval while it is ours. It looks
// with lstat, not an open: an NFS client that removes a file it holds
// open renames it instead (.nfsXXXX), and the session directory being
// removed under its lock would not be empty.
func (l *leaseHeld) renew(every time.Duration) {
	defer close(l.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		var st unix.Stat_t
		err := unix.Lstat(l.path, &st)
		if vanished(err) || err == nil && !idOf(&st).sameFile(l.id) {
			return // removed with its directory, or broken: no longer ours
		}
		if err == nil {
			touch(l.path)
		}
		// Any other error (the server not answering): try again.
	}
}

// release stops the renewal and removes the lock file if it is still
// ours: the same file, holding our token (or, made on a full disk, empty).
func (l *leaseHeld) release() {
	close(l.stop)
	<-l.done
	st, data, err := freshStat(l.path, true)
	if err != nil || !idOf(&st).sameFile(l.id) {
		return
	}
	if rec, ok := parseLease(data); len(data) > 0 && (!ok || rec.Token != l.token) {
		return
	}
	unix.Unlink(l.path)
}

// procStart reads a process's start time (clock ticks after boot) and
// state from /proc.
func procStart(pid int) (uint64, byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, errors.New("malformed /proc/" + strconv.Itoa(pid) + "/stat")
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 {
		return 0, 0, errors.New("malformed /proc/" + strconv.Itoa(pid) + "/stat")
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	return start, f[0][0], err
}

// BreakIfHolderGone breaks the lease lock at path when its record names a
// process of this machine (this host, boot and pid namespace) that has
// exited, and says whether it did. A waiter never judges a holder so (a
// pid means nothing on another machine, nor in another pid namespace of
// this one): the lease decides. This is for a command that has found a
// session's owner dead, and so looks at the holder of its lock: a kill
// that killed the session's supervisor, a reader that records a dead
// owner (nothing would make it look again when the lease runs out). Under
// flock it does nothing: the kernel let go of the lock as the holder died.
func BreakIfHolderGone(root, path string) bool {
	if lease, err := UsesLeases(root, filepath.Dir(path)); err != nil || !lease {
		return false
	}
	st, data, err := freshStat(path, true)
	if err != nil {
		return false
	}
	rec, ok := parseLease(data)
	if !ok || !rec.local() || !rec.gone() {
		return false
	}
	return removeIfSame(path, idOf(&st), sibling(path, "broken", newToken()))
}
