package watch

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// genWatch tells when sessions.gen was closed after being opened for
// writing: when a writer that changed a settled record is done with it
// (it advances the generation, changes the record, then closes the file,
// all under its exclusive lock), or a listing that read it (it opens it
// for writing too) is. A subscription to every session learns from it
// that a settled record may have changed, without a watch on each of
// 100,000 session dirs. fsnotify cannot ask for close-write events, so
// this is inotify itself; the file is read through the runtime's poller,
// so Close ends the read.
type genWatch struct {
	f    *os.File
	c    chan struct{}
	lost chan struct{} // closed when the file went (removed, renamed)
	done chan struct{}
}

func newGenWatch(path string) (*genWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	// The file itself, never through a symlink.
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_CLOSE_WRITE|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_DONT_FOLLOW); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	w := &genWatch{f: os.NewFile(uintptr(fd), path), c: make(chan struct{}, 1), lost: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// C delivers a value after the file was closed by a writer (coalesced).
func (w *genWatch) C() <-chan struct{} { return w.c }

// Lost is closed once the file is gone: nothing more will be told.
func (w *genWatch) Lost() <-chan struct{} { return w.lost }

func (w *genWatch) loop() {
	defer close(w.done)
	lost := false
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return
			}
			// Nothing else fails a read of an inotify fd but a buffer
			// too small, which this one is not: say the file changed and
			// stop, as if it were gone.
			n = 0
			lost = true
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0 {
				lost = true
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
		// An overflow (IN_Q_OVERFLOW) or any event says the same: look.
		select {
		case w.c <- struct{}{}:
		default:
		}
		if lost {
			close(w.lost)
			return
		}
	}
}

// Close ends the watch and waits for its goroutine.
func (w *genWatch) Close() {
	w.f.Close()
	<-w.done
}
