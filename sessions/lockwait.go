package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Waiting for a lock. The supervisor waits as long as it takes: what it
// records is the outcome of work that already happened. A command (inject,
// kill, rm) waits at most lock_timeout, says after a second what it waits
// for, and gives up at once when its context ends (Ctrl+C), having changed
// nothing (past lock_timeout, a kill forces the session's supervisor:
// lockedForKill). Readers (ls, show, the dashboard) never wait for a writer's lock.
//
// Whoever holds a session's lock writes its pid and command into the lock
// file, so a waiter can say who it waits for; the note is emptied before
// the lock is released.

// DefaultLockTimeout is how long a command waits for a lock (config
// lock_timeout).
const DefaultLockTimeout = 10 * time.Second

// lockNoticeAfter is how long a command waits before it says what for.
const lockNoticeAfter = time.Second

// LockHolder is the process that holds a lock, as its note says.
type LockHolder struct {
	PID     int
	Command string
}

func (h LockHolder) String() string {
	if h.PID <= 0 {
		return "another process"
	}
	if h.Command == "" {
		return "pid " + strconv.Itoa(h.PID)
	}
	return fmt.Sprintf("pid %d, %s", h.PID, h.Command)
}

// LockWait is a lock a command has been waiting for a while:
// ManagerOptions.LockWaiting hears of it.
type LockWait struct {
	// What is locked: "session 1a2b", "the session list", "landings".
	What   string
	Holder LockHolder
}

// String is the line a command prints: "waiting for session 1a2b: locked
// by pid 4242, zwarm kill".
func (w LockWait) String() string {
	return "waiting for " + w.What + ": locked by " + w.Holder.String()
}

// ErrLockTimeout is returned (wrapped, as a *LockTimeoutError) when a lock
// is still held after lock_timeout.
var ErrLockTimeout = errors.New("lock wait timed out")

// LockTimeoutError is a lock still held after the command waited
// lock_timeout for it. Nothing was changed, unless Did says otherwise.
type LockTimeoutError struct {
	What   string
	Holder LockHolder
	After  time.Duration
	// Did is what the command did all the same ("" for nothing): a kill
	// stops a session's processes, which needs no lock.
	Did string
}

func (e *LockTimeoutError) Error() string {
	if e.Did != "" {
		return fmt.Sprintf("%s is still locked by %s after %s; %s", e.What, e.Holder, e.After, e.Did)
	}
	return fmt.Sprintf("%s is still locked by %s after %s; nothing was changed: try again once it is done, or raise lock_timeout in %s",
		e.What, e.Holder, e.After, ConfigFile)
}

func (e *LockTimeoutError) Is(target error) bool { return target == ErrLockTimeout }

// lockPolicy is how a command waits for locks. The zero value waits as
// long as the context allows, silently.
type lockPolicy struct {
	timeout time.Duration // 0: no limit
	notify  func(LockWait)
}

type lockPolicyKey struct{}

// withLockPolicy makes the locks taken under ctx wait the way p says.
func withLockPolicy(ctx context.Context, p lockPolicy) context.Context {
	return context.WithValue(ctx, lockPolicyKey{}, p)
}

func lockPolicyOf(ctx context.Context) lockPolicy {
	p, _ := ctx.Value(lockPolicyKey{}).(lockPolicy)
	return p
}

// LockTimeout is how long a command waits for a lock, defaulted.
func (c *Config) LockTimeout() time.Duration {
	if c != nil && c.LockLimit.Duration > 0 {
		return c.LockLimit.Duration
	}
	return DefaultLockTimeout
}

// writing is ctx for a command that changes sessions: its locks wait at
// most lock_timeout, and after a second it says what it waits for.
func (m *Manager) writing(ctx context.Context) context.Context {
	timeout := DefaultLockTimeout
	if cfg, err := m.Config(); err == nil {
		timeout = cfg.LockTimeout()
	}
	return withLockPolicy(ctx, lockPolicy{timeout: timeout, notify: m.lockWaiting})
}

// waitLock takes an exclusive flock on f for what. An uncontended lock is
// taken at once. Otherwise it is tried again, with a short pause (flock has
// nothing to wait on but itself), until ctx ends, the policy's timeout
// passes, or it is free; only a caller with no context to end and no
// policy blocks in the kernel.
func waitLock(ctx context.Context, f *os.File, what string) error {
	err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return err
	}
	p := lockPolicyOf(ctx)
	if ctx.Done() == nil && p.timeout <= 0 && p.notify == nil {
		return flock(f, unix.LOCK_EX)
	}
	var deadline, notice <-chan time.Time
	if p.timeout > 0 {
		t := time.NewTimer(p.timeout)
		defer t.Stop()
		deadline = t.C
	}
	if p.notify != nil {
		t := time.NewTimer(lockNoticeAfter)
		defer t.Stop()
		notice = t.C
	}
	pause := time.Millisecond
	for {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-deadline:
			t.Stop()
			return &LockTimeoutError{What: what, Holder: lockHolderOf(f), After: p.timeout}
		case <-notice:
			t.Stop()
			notice = nil
			p.notify(LockWait{What: what, Holder: lockHolderOf(f)})
		case <-t.C:
			pause = min(2*pause, 20*time.Millisecond)
		}
		err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
	}
}

// noteHolder writes this process into a lock file it just locked.
func noteHolder(f *os.File) bool {
	note := strconv.Itoa(os.Getpid()) + " " + holderCommand() + "\n"
	if f.Truncate(0) != nil {
		return false
	}
	_, err := f.WriteAt([]byte(note), 0)
	return err == nil
}

// lockHolderOf reads the note of a lock file's holder; a note whose
// process is gone says nothing.
func lockHolderOf(f *os.File) LockHolder {
	var buf [512]byte
	n, _ := f.ReadAt(buf[:], 0)
	pidText, cmd, _ := strings.Cut(strings.TrimSpace(string(buf[:n])), " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return LockHolder{}
	}
	if _, err := readStat(pid); err != nil {
		return LockHolder{}
	}
	return LockHolder{PID: pid, Command: cmd}
}

// holderCommand names this process in lock notes: "its supervisor", or the
// program and its subcommand ("zwarm kill").
func holderCommand() string {
	if InSupervisor() {
		return "its supervisor"
	}
	if len(os.Args) == 0 {
		return ""
	}
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--state-dir" {
			i++ // its value
			continue
		}
		if !strings.HasPrefix(a, "-") {
			return name + " " + a
		}
	}
	return name
}

// isReadOnly reports an error of a state dir that cannot be written.
func isReadOnly(err error) bool {
	return errors.Is(err, unix.EROFS) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}
