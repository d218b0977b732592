package proc

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// ExitWatch tells when watched processes exit, by pidfd: a process killed
// with SIGKILL (a supervisor, an orchestrator run) writes nothing, so file
// events alone would never show its death. One epoll instance and one
// goroutine serve any number of processes; exits coalesce into a wake-up
// (C) and a set the owner drains (Drain).
type ExitWatch struct {
	ep, wake int
	mu       sync.Mutex
	byFD     map[int]watched
	byKey    map[string]int
	exited   map[string]bool
	next     int32 // the last registration's token
	c        chan struct{}
	done     chan struct{}
	closed   bool
}

// watched is a pidfd's registration. Its token rides in the epoll event:
// an event read for a pidfd just closed, whose number the kernel has
// since given to another process's pidfd, names the old token, and must
// not be taken for that process's exit.
type watched struct {
	key   string
	token int32
}

// NewExitWatch starts a watch; Close ends it.
func NewExitWatch() (*ExitWatch, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("watch processes: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("watch processes: %w", err)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return nil, fmt.Errorf("watch processes: %w", err)
	}
	w := &ExitWatch{ep: ep, wake: wake, byFD: map[int]watched{}, byKey: map[string]int{},
		exited: map[string]bool{}, c: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// Add watches the process ref names, under key (a session id). A process
// that is already gone is reported at once. Adding a key again replaces
// the process watched for it.
func (w *ExitWatch) Add(key string, ref *Ref) {
	w.Remove(key)
	if ref == nil || ref.PID <= 0 {
		w.report(key)
		return
	}
	fd, err := unix.PidfdOpen(ref.PID, 0)
	if err != nil || !ref.Alive() {
		// Gone already, or reused by another process (checked after the
		// open, so the pidfd cannot name a newer process).
		if err == nil {
			unix.Close(fd)
		}
		w.report(key)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		unix.Close(fd)
		return
	}
	w.next++
	reg := watched{key: key, token: w.next}
	if err := unix.EpollCtl(w.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd), Pad: reg.token}); err != nil {
		unix.Close(fd)
		return
	}
	w.byFD[fd], w.byKey[key] = reg, fd
}

// Remove stops watching key.
func (w *ExitWatch) Remove(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if fd, ok := w.byKey[key]; ok {
		w.dropLocked(fd)
	}
}

func (w *ExitWatch) dropLocked(fd int) {
	unix.EpollCtl(w.ep, unix.EPOLL_CTL_DEL, fd, nil)
	unix.Close(fd)
	delete(w.byKey, w.byFD[fd].key)
	delete(w.byFD, fd)
}

// C delivers a value after a watched process has exited.
func (w *ExitWatch) C() <-chan struct{} { return w.c }

// Drain returns the keys whose process exited since the last Drain.
func (w *ExitWatch) Drain() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.exited))
	for k := range w.exited {
		out = append(out, k)
	}
	clear(w.exited)
	return out
}

func (w *ExitWatch) report(key string) {
	w.mu.Lock()
	w.exited[key] = true
	w.mu.Unlock()
	select {
	case w.c <- struct{}{}:
	default:
	}
}

func (w *ExitWatch) loop() {
	defer close(w.done)
	evs := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(w.ep, evs, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range evs[:n] {
			fd := int(ev.Fd)
			if fd == w.wake {
				return
			}
			w.mu.Lock()
			reg, ok := w.byFD[fd]
			ok = ok && reg.token == ev.Pad
			if ok {
				w.dropLocked(fd)
			}
			w.mu.Unlock()
			if ok {
				w.report(reg.key)
			}
		}
	}
}

// Close stops the watch and waits for its goroutine.
func (w *ExitWatch) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	var one = []byte{1, 0, 0, 0, 0, 0, 0, 0}
	unix.Write(w.wake, one)
	<-w.done
	w.mu.Lock()
	for fd := range w.byFD {
		w.dropLocked(fd)
	}
	w.mu.Unlock()
	unix.Close(w.wake)
	unix.Close(w.ep)
}
