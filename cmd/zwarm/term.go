package main

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// streams are the command's standard streams and what they are connected
// to, replaceable in tests.
type streams struct {
	in     io.Reader
	out    io.Writer
	errOut io.Writer

	// inTTY, outTTY and errTTY say which streams are a terminal: people
	// get tables that fit, colour and progress; programs get plain text.
	inTTY, outTTY, errTTY bool
	// width is the terminal's width in columns, when out or errOut is one.
	width int
	// color says colour may be used on out: a terminal, NO_COLOR unset,
	// and not a dumb terminal.
	color bool
	// process says the streams are this process's own (not a test's), so
	// a command may tune the runtime for itself.
	process bool
}

func newStreams() *streams {
	s := &streams{in: os.Stdin, out: os.Stdout, errOut: os.Stderr, process: true,
		inTTY: isTerminal(os.Stdin), outTTY: isTerminal(os.Stdout), errTTY: isTerminal(os.Stderr)}
	s.width = termWidth(os.Stdout, os.Stderr)
	s.color = s.outTTY && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	return s
}

// isTerminalWriter reports whether w is a terminal.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// termWidth is the width of the first terminal among files, COLUMNS if it
// cannot be asked, 80 if nothing says.
func termWidth(files ...*os.File) int {
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

// interactive says the user can be asked a question.
func (s *streams) interactive() bool { return s.inTTY && (s.outTTY || s.errTTY) }

// SGR colours, used only when streams.color says so.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrDim    = "\x1b[2m"
	sgrRed    = "\x1b[31m"
	sgrGreen  = "\x1b[32m"
	sgrYellow = "\x1b[33m"
	sgrBlue   = "\x1b[34m"
	sgrCyan   = "\x1b[36m"
)

// paint wraps text in an SGR colour when colour is on.
func (s *streams) paint(sgr, text string) string {
	if !s.color || sgr == "" || text == "" {
		return text
	}
	return sgr + text + sgrReset
}
