package runfeed

import (
	"errors"
	"fmt"
	"sync"

	"github.com/zwarm/zwarm/sessions"
	"golang.org/x/sys/unix"
)

// exits tells when the processes that own running runs exit, by pidfd: a
// SIGKILLed `zwarm orchestrate` writes nothing, so file events alone would
// show its run running forever. One epoll instance and one goroutine serve
// every run; an exit is reported to onExit with the run's id.
type exits struct {
	ep, wake int
	onExit   func(id string)

	mu     sync.Mutex
	byFD   map[int]string
	byID   map[string]watched
	closed bool
	done   chan struct{}
}

type watched struct {
	fd  int
	ref sessions.ProcRef
}

func newExits(onExit func(id string)) (*exits, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("watch run owners: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("watch run owners: %w", err)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return nil, fmt.Errorf("watch run owners: %w", err)
	}
	x := &exits{ep: ep, wake: wake, onExit: onExit, byFD: map[int]string{}, byID: map[string]watched{}, done: make(chan struct{})}
	go x.loop()
	return x, nil
}

// watch follows the owner of run id; a process already gone is reported
// at once. Watching the same process again does nothing.
func (x *exits) watch(id string, ref *sessions.ProcRef) {
	x.mu.Lock()
	if w, ok := x.byID[id]; ok && ref != nil && w.ref == *ref {
		x.mu.Unlock()
		return
	}
	x.mu.Unlock()
	x.forget(id)
	if ref == nil || ref.PID <= 0 {
		return
	}
	fd, err := unix.PidfdOpen(ref.PID, 0)
	if err != nil {
		// ESRCH: gone already. Any other failure leaves the run without
		// live liveness; reporting it would only loop.
		if errors.Is(err, unix.ESRCH) {
			x.onExit(id)
		}
		return
	}
	// Checked after the open, so the pidfd cannot name a newer process
	// that took the pid.
	if !ref.Alive() {
		unix.Close(fd)
		x.onExit(id)
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		unix.Close(fd)
		return
	}
	if err := unix.EpollCtl(x.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
		unix.Close(fd)
		return
	}
	x.byFD[fd], x.byID[id] = id, watched{fd: fd, ref: *ref}
}

// forget stops watching run id's owner.
func (x *exits) forget(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if w, ok := x.byID[id]; ok {
		x.dropLocked(w.fd)
	}
}

func (x *exits) dropLocked(fd int) {
	unix.EpollCtl(x.ep, unix.EPOLL_CTL_DEL, fd, nil)
	unix.Close(fd)
	delete(x.byID, x.byFD[fd])
	delete(x.byFD, fd)
}

func (x *exits) loop() {
	defer close(x.done)
	evs := make([]unix.EpollEvent, 16)
	for {
		n, err := unix.EpollWait(x.ep, evs, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range evs[:n] {
			fd := int(ev.Fd)
			if fd == x.wake {
				return
			}
			x.mu.Lock()
			id, ok := x.byFD[fd]
			if ok {
				x.dropLocked(fd)
			}
			x.mu.Unlock()
			if ok {
				x.onExit(id)
			}
		}
	}
}

// close stops the watch and waits for its goroutine.
func (x *exits) close() {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	x.closed = true
	x.mu.Unlock()
	unix.Write(x.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	<-x.done
	x.mu.Lock()
	for fd := range x.byFD {
		x.dropLocked(fd)
	}
	x.mu.Unlock()
	unix.Close(x.wake)
	unix.Close(x.ep)
}
