package watch

import (
	"errors"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// dirWatch is what a changeSource needs of fsnotify's watcher.
type dirWatch interface {
	Add(name string) error
	Remove(name string) error
	Close() error
}

// noWatch watches nothing: a changeSource that has it polls.
type noWatch struct{}

func (noWatch) Add(string) error    { return nil }
func (noWatch) Remove(string) error { return nil }
func (noWatch) Close() error        { return nil }

// pollEvery is how often a changeSource without file watches looks at
// everything again.
const pollEvery = time.Second

// newWatcher is fsnotify's; a test refuses it as the kernel does.
var newWatcher = fsnotify.NewWatcher

// openWatch is a watcher of directories and its channels, or, when the
// user's inotify instances are used up (128 for every program: a
// dashboard, pages, other zwarms), or the system's files, none, and polling says so: the
// changeSource then looks at everything every pollEvery, rather than
// failing the command that asked (a wait, a dashboard) for want of one.
func openWatch() (w dirWatch, events <-chan fsnotify.Event, errs <-chan error, polling bool, err error) {
	fw, err := newWatcher()
	switch {
	case err == nil:
		return fw, fw.Events, fw.Errors, false, nil
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return noWatch{}, nil, nil, true, nil
	}
	return nil, nil, nil, false, err
}
