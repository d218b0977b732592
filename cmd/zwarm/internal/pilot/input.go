package pilot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/chzyer/readline"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/render"
	"golang.org/x/sys/unix"
)

// Input reads the person's lines at the pilot's prompt: with line
// editing and history on a terminal, plain lines otherwise (a script).
type Input interface {
	// Line reads the next line: io.EOF at the end of input (Ctrl+D),
	// ErrQuitKey for Ctrl+C at the prompt, ErrClosed once Close was
	// called (by a signal) while it waited.
	Line() (string, error)
	// Remember keeps a line in the history.
	Remember(line string)
	// UseHistory sets the history file, once the state dir exists.
	UseHistory(path string)
	// Notice shows a line while Line waits, above the line being typed,
	// which is kept. Any goroutine may call it.
	Notice(text string)
	// Close ends the prompt, and a Line waiting.
	Close()
}

var (
	ErrQuitKey = errors.New("Ctrl+C at the prompt")
	ErrClosed  = errors.New("the prompt was closed")
)

// HistoryFile is the pilot's prompt history in the state dir, one line
// a line, shared by every pilot of the state dir (as a shell's is).
const HistoryFile = "pilot_history"

// historyLimit bounds the lines kept.
const historyLimit = 1000

// NewInput is the prompt on s: line editing, history and completion of
// commands on a terminal, plain lines otherwise.
func NewInput(s *cli.Streams, prompt string, commands []string) (Input, error) {
	if f, ok := s.In.(*os.File); ok && s.InTTY && s.ErrTTY {
		var items []readline.PrefixCompleterInterface
		for _, c := range commands {
			items = append(items, readline.PcItem(c))
		}
		// Its own wrapper of stdin: closing it ends a read in progress,
		// and leaves the terminal open.
		rl, err := readline.NewEx(&readline.Config{Prompt: prompt, Stdin: readline.NewCancelableStdin(f), Stdout: s.ErrOut, Stderr: s.ErrOut,
			HistoryLimit: historyLimit, DisableAutoSaveHistory: true, AutoComplete: readline.NewPrefixCompleter(items...)})
		if err != nil {
			return nil, fmt.Errorf("line editing on the terminal: %w", err)
		}
		return &termInput{rl: rl}, nil
	}
	p, err := newPlainInput(s.In)
	if p != nil {
		p.errOut = s.ErrOut
	}
	return p, err
}

// termInput is the prompt on a terminal: readline puts the terminal in
// raw mode only while a line is read, so Ctrl+C during a model turn is a
// signal (it stops the turn) and at the prompt a key (it quits).
//
// The history is kept here, not by readline: its file is made 0600,
// never through a symlink, and readline can take a file only when it
// starts, before a first run may have made the state dir.
type termInput struct {
	rl      *readline.Instance
	mu      sync.Mutex
	closed  bool
	file    string   // the history file, once the state dir exists
	session []string // the lines read before that, for the file
}

func (t *termInput) Line() (string, error) {
	s, err := t.rl.Readline()
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	switch {
	case closed:
		return "", ErrClosed
	case errors.Is(err, readline.ErrInterrupt):
		return "", ErrQuitKey
	}
	return s, err
}

func (t *termInput) Remember(line string) {
	t.rl.SaveHistory(line)
	if t.file == "" {
		t.session = append(t.session, line)
		return
	}
	appendHistory(t.file, line)
}

func (t *termInput) UseHistory(path string) {
	if t.file != "" {
		return
	}
	old, err := readHistory(path)
	if err != nil {
		return // no state dir yet, or a history that cannot be had
	}
	t.file = path
	t.rl.ResetHistory()
	for _, l := range old {
		t.rl.SaveHistory(l)
	}
	for _, l := range t.session {
		t.rl.SaveHistory(l)
		appendHistory(path, l)
	}
	t.session = nil
}

func (t *termInput) Notice(text string) {
	// readline clears the line being typed, writes, and draws it again.
	t.rl.Write([]byte(render.SafeLine(text) + "\n"))
}

func (t *termInput) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.rl.Close()
}

// readHistory returns the history's lines, the file made (0600, never
// through a symlink) if the state dir exists, and cut to its last
// historyLimit lines when it has grown past twice that.
func readHistory(path string) ([]string, error) {
	if fi, err := os.Lstat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return nil, errors.New("no state dir for the history")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|unix.O_NOFOLLOW, runs.FilePerm)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) <= historyLimit {
		return lines, nil
	}
	grown := len(lines) > 2*historyLimit
	lines = lines[len(lines)-historyLimit:]
	if grown {
		err = rewriteHistory(path, lines)
	}
	return lines, err
}

func rewriteHistory(path string, lines []string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+HistoryFile+".tmp*")
	if err != nil {
		return err
	}
	_, err = io.WriteString(tmp, strings.Join(lines, "\n")+"\n")
	if err == nil {
		err = tmp.Chmod(runs.FilePerm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// appendHistory adds a line to the history file; a failure only loses
// the line from later sessions' history.
func appendHistory(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW, runs.FilePerm)
	if err != nil {
		return
	}
	f.WriteString(line + "\n")
	f.Close()
}

// plainInput reads lines from what is not a terminal: no prompt, no
// editing, no history. From a file descriptor it waits in poll(2) on it
// and on a pipe that close closes, so a signal can end the wait and no
// read is left blocked behind.
type plainInput struct {
	errOut io.Writer // where notices go
	mu     sync.Mutex
	f      *os.File
	r      *bufio.Reader // when the input is no file
	buf    []byte
	eof    bool
	cr, cw *os.File
	once   sync.Once
}

func newPlainInput(in io.Reader) (*plainInput, error) {
	p := &plainInput{}
	if f, ok := in.(*os.File); ok {
		cr, cw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		p.f, p.cr, p.cw = f, cr, cw
	} else {
		p.r = bufio.NewReader(in)
	}
	return p, nil
}

func (p *plainInput) Line() (string, error) {
	if p.r != nil {
		s, err := p.r.ReadString('\n')
		if err == io.EOF && s != "" {
			err = nil
		}
		return trimEOL(s), err
	}
	chunk := make([]byte, 4096)
	for {
		if i := bytes.IndexByte(p.buf, '\n'); i >= 0 {
			s := string(p.buf[:i])
			p.buf = p.buf[i+1:]
			return trimEOL(s), nil
		}
		if p.eof {
			if len(p.buf) > 0 {
				s := string(p.buf)
				p.buf = nil
				return trimEOL(s), nil
			}
			return "", io.EOF
		}
		fds := []unix.PollFd{{Fd: int32(p.f.Fd()), Events: unix.POLLIN}, {Fd: int32(p.cr.Fd()), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return "", err
		}
		if fds[1].Revents != 0 {
			return "", ErrClosed
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(int(p.f.Fd()), chunk)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue
		case err != nil:
			return "", err
		case n == 0:
			p.eof = true
		}
		p.buf = append(p.buf, chunk[:n]...)
	}
}

func trimEOL(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

func (p *plainInput) Remember(string) {}

func (p *plainInput) Notice(text string) {
	if p.errOut == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.errOut, render.SafeLine(text))
}

func (p *plainInput) UseHistory(string) {}

func (p *plainInput) Close() {
	if p.cw != nil {
		p.once.Do(func() { p.cw.Close() })
	}
}
