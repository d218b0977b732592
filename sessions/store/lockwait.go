package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Waiting for a lock. The supervisor waits as long as it takes: what it
// records is the outcome of work that already happened. A command (inject,
// kill, rm) waits at most lock_timeout, says after a second what it waits
// for, and gives up at once when its context ends (Ctrl+C), having changed
// nothing (past lock_timeout, a kill forces the session's supervisor and
// says what it did: LockTimeoutError.Did). Readers (ls, show, the
// dashboard) never wait for a writer's lock.
//
// Whoever holds a session's lock writes its pid and command into the lock
// file, so a waiter can say who it waits for; the note is emptied before
// the lock is released. (A lease lock's file is its holder's record from
// the start: lease.go.)

// DefaultLockTimeout is how long a command waits for a lock (config
// lock_timeout).
const DefaultLockTimeout = 10 * time.Second

// lockNoticeAfter is how long a command waits before it says what for.
const lockNoticeAfter = time.Second

// LockHolder is the process that holds a lock, as its note says.
type LockHolder struct {
	PID     int
	Command string
	// Host is the machine it runs on, when that is not this one (a lease
	// lock's holder on another node of a cluster).
	Host string
}

func (h LockHolder) String() string {
	if h.PID <= 0 {
		return "another process"
	}
	who := "pid " + strconv.Itoa(h.PID)
	if h.Host != "" {
		who += " on " + h.Host
	}
	if h.Command == "" {
		return who
	}
	return who + ", " + h.Command
}

// LockWait is a lock a command has been waiting for a while: the
// policy's Notify hears of it.
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

// LockPolicy is how a command waits for locks. The zero value waits as
// long as the context allows, silently.
type LockPolicy struct {
	Timeout time.Duration // 0: no limit
	Notify  func(LockWait)
}

type lockPolicyKey struct{}

// WithLockPolicy makes the locks taken under ctx wait the way p says.
func WithLockPolicy(ctx context.Context, p LockPolicy) context.Context {
	return context.WithValue(ctx, lockPolicyKey{}, p)
}

// LockPolicyOf is how the locks taken under ctx wait.
func LockPolicyOf(ctx context.Context) LockPolicy {
	p, _ := ctx.Value(lockPolicyKey{}).(LockPolicy)
	return p
}

// WaitLock takes an exclusive flock on f for what. An uncontended lock is
// taken at once. Otherwise it is tried again, with a short pause (flock has
// nothing to wait on but itself), until ctx ends, the policy's timeout
// passes, or it is free; only a caller with no context to end and no
// policy blocks in the kernel.
func WaitLock(ctx context.Context, f *os.File, what string) error {
	try := func() (bool, error) {
		err := Flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return err == nil, err
	}
	block := func() error { return Flock(f, unix.LOCK_EX) }
	return waitFor(ctx, what, 20*time.Millisecond, try, func() LockHolder { return lockHolderOf(f) }, block)
}

// waitFor waits for a lock, whatever its scheme, as the policy of ctx
// says: try takes it if it can; holder says who has it; block, if not
// nil, waits for it in the kernel when there is nothing else to wait
// for. Pauses between tries grow to maxPause.
func waitFor(ctx context.Context, what string, maxPause time.Duration, try func() (bool, error), holder func() LockHolder, block func() error) error {
	if got, err := try(); got || err != nil {
		return err
	}
	p := LockPolicyOf(ctx)
	if block != nil && ctx.Done() == nil && p.Timeout <= 0 && p.Notify == nil {
		return block()
	}
	var deadline, notice <-chan time.Time
	if p.Timeout > 0 {
		t := time.NewTimer(p.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	if p.Notify != nil {
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
			return &LockTimeoutError{What: what, Holder: holder(), After: p.Timeout}
		case <-notice:
			t.Stop()
			notice = nil
			p.Notify(LockWait{What: what, Holder: holder()})
		case <-t.C:
			pause = min(2*pause, maxPause)
		}
		if got, err := try(); got || err != nil {
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
	if _, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil {
		return LockHolder{}
	}
	return LockHolder{PID: pid, Command: cmd}
}

var holderName atomic.Pointer[string]

// NameHolder makes this process name itself name ("its supervisor") in
// the notes of the locks it holds, in place of its command line.
func NameHolder(name string) { holderName.Store(&name) }

// holderCommand names this process in lock notes: the name NameHolder
// gave it, or the program and its subcommand ("zwarm kill").
func holderCommand() string {
	if name := holderName.Load(); name != nil {
		return *name
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
