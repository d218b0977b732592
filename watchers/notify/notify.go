package notify

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Event is one occurrence to tell of.
type Event struct {
	Name   string // one of Events
	ID     string // the session's or the run's id
	Text   string // what to say, one line
	Status string // the session's or run's status
	// Dir is the record's directory (a session's or a run's), where the
	// marker that it was sent goes; Key is what makes this occurrence
	// unique among the record's events of this name (a turn, a silence).
	Dir, Key string
}

// Options are what a Notifier needs besides its settings.
type Options struct {
	// Runner is the command line that runs a command detached and bounded
	// (zwarm __notify, which calls Run); the command and the timeout are
	// appended. Without one the command is not run.
	Runner []string
	// Bell is the terminal to ring, or nil.
	Bell io.Writer
	// Log receives what went wrong; nil discards it.
	Log *slog.Logger
}

// Notifier sends events once each, whichever zwarm process sees them
// first, and rings its own terminal. Its methods may be called from any
// goroutine and never block on the command.
type Notifier struct {
	cfg *Config
	opt Options
	mu  sync.Mutex // orders the bell's writes
}

// New returns a notifier for cfg (nil: the defaults).
func New(cfg *Config, opt Options) *Notifier {
	if cfg == nil {
		cfg = &Config{}
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if !cfg.Rings() {
		opt.Bell = nil
	}
	return &Notifier{cfg: cfg, opt: opt}
}

// Notify tells of ev if [notify] on names it: it rings the terminal, and
// runs the command if no other process has claimed ev yet. It reports
// whether this process ran the command.
func (n *Notifier) Notify(ev Event) bool {
	if n == nil || !n.cfg.Wants(ev.Name) {
		return false
	}
	n.ring(ev)
	if n.cfg.Command == "" || len(n.opt.Runner) == 0 {
		return false
	}
	claimed, err := claim(ev)
	if err != nil {
		n.opt.Log.Warn("notify: cannot mark the event as sent, so it is not sent", "event", ev.Name, "id", ev.ID, "err", err)
		return false
	}
	if !claimed {
		return false
	}
	if err := n.start(ev); err != nil {
		n.opt.Log.Warn("notify: cannot start the command", "event", ev.Name, "id", ev.ID, "err", err)
		return false
	}
	return true
}

// claim makes ev's marker; false if another process made it first.
func claim(ev Event) (bool, error) {
	dir := filepath.Join(ev.Dir, "notified")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false, fmt.Errorf("%s is not a directory", dir)
	}
	name := ev.Name
	if ev.Key != "" {
		name += "." + ev.Key
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return true, f.Close()
}

// start runs the command through the runner, detached: the runner stops
// it at the timeout, and this process reaps the runner without waiting
// for it.
func (n *Notifier) start(ev Event) error {
	argv := append(append([]string(nil), n.opt.Runner...), n.cfg.timeout().String(), n.cfg.Command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "ZWARM_EVENT="+ev.Name, "ZWARM_ID="+ev.ID,
		"ZWARM_TEXT="+oneLine(ev.Text), "ZWARM_STATUS="+ev.Status)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	// The runner bounds itself; this goroutine ends with it (or with the
	// process, which must not wait for a notification to exit).
	go cmd.Wait()
	return nil
}

// oneLine is text as one line without control characters, for a command
// that shows it.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}
