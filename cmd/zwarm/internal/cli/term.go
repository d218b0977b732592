package cli

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Streams are the command's standard streams and what they are connected
// to, replaceable in tests.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// inTTY, outTTY and errTTY say which streams are a terminal: people
	// get tables that fit, colour and progress; programs get plain text.
	InTTY, OutTTY, ErrTTY bool
	// width is the terminal's width in columns, when out or errOut is one.
	Width int
	// color says colour may be used on out: a terminal, NO_COLOR unset,
	// and not a dumb terminal.
	Color bool
	// process says the streams are this process's own (not a test's), so
	// a command may tune the runtime for itself.
	Process bool
}

func NewStreams() *Streams {
	s := &Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Process: true,
		InTTY: IsTerminal(os.Stdin), OutTTY: IsTerminal(os.Stdout), ErrTTY: IsTerminal(os.Stderr)}
	s.Width = TermWidth(os.Stdout, os.Stderr)
	s.Color = s.OutTTY && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	return s
}

// IsTerminalWriter reports whether w is a terminal.
func IsTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && IsTerminal(f)
}

func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// TermWidth is the width of the first terminal among files, COLUMNS if it
// cannot be asked, 80 if nothing says.
func TermWidth(files ...*os.File) int {
	for _, f := range files {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			return int(ws.Col)
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// Interactive says the user can be asked a question.
func (s *Streams) Interactive() bool { return s.InTTY && (s.OutTTY || s.ErrTTY) }

// SGR colours, used only when streams.color says so.
const (
	Reset  = "\x1b[0m"
	Bold   = "\x1b[1m"
	Dim    = "\x1b[2m"
	Red    = "\x1b[31m"
	Green  = "\x1b[32m"
	Yellow = "\x1b[33m"
	Blue   = "\x1b[34m"
	Cyan   = "\x1b[36m"
)

// Paint wraps text in an SGR colour when colour is on.
func (s *Streams) Paint(sgr, text string) string {
	if !s.Color || sgr == "" || text == "" {
		return text
	}
	return sgr + text + Reset
}

// KeepTerminal saves the settings of the terminal f and returns what
// puts them back: a program run in the foreground that dies without
// restoring them (a CLI in raw mode stopped by a signal) leaves the
// person's shell as it found it, echo and Ctrl+C included.
func KeepTerminal(f *os.File) (restore func()) {
	fd := int(f.Fd())
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, saved) }
}
