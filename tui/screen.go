package tui

import (
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"
)

// screen draws the dashboard on the terminal, and only when what it shows
// has changed. Bubble Tea's own renderer redraws on a ticker (60 times a
// second by default) whether or not anything changed, which keeps an idle
// dashboard awake; this one sleeps until a frame differs from the last,
// then draws the lines that changed, at most once per frameDelay.
type screen struct {
	out io.Writer
	// in is the terminal's input and cooked its state before the
	// dashboard made it raw: suspend gives it back in that state.
	in     *os.File
	cooked *term.State
	// resumed is told when the terminal comes back: a resize meanwhile
	// was signalled to the program that had it, not to this one.
	resumed chan<- os.Signal

	mu      sync.Mutex
	drawn   []string // the lines on the terminal
	pending string   // the latest frame, not drawn yet
	armed   bool     // a draw is scheduled
	clear   bool     // the next draw repaints everything (after a resize)
	closed  bool
	paused  bool // another program has the terminal (suspend)
}

// frameDelay coalesces bursts of changes into one draw.
const frameDelay = 16 * time.Millisecond

// show takes the latest frame; it is drawn shortly if it differs from what
// is on the terminal.
func (s *screen) show(frame string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// pending is what is (or is about to be) on the terminal.
	if s.closed || frame == s.pending && !s.clear {
		return
	}
	s.pending = frame
	if !s.armed {
		s.armed = true
		time.AfterFunc(frameDelay, s.draw)
	}
}

func (s *screen) draw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	if s.closed || s.paused {
		return
	}
	lines := strings.Split(s.pending, "\n")
	var b strings.Builder
	if s.clear {
		b.WriteString("\x1b[2J")
		s.drawn, s.clear = nil, false
	}
	for i, l := range lines {
		if i < len(s.drawn) && s.drawn[i] == l {
			continue
		}
		// Move to the line, write it, erase what is left of the old one.
		b.WriteString("\x1b[" + strconv.Itoa(i+1) + ";1H" + l + "\x1b[K")
	}
	if len(lines) < len(s.drawn) {
		b.WriteString("\x1b[" + strconv.Itoa(len(lines)+1) + ";1H\x1b[J")
	}
	s.drawn = lines
	if b.Len() > 0 {
		io.WriteString(s.out, b.String())
	}
}

// The sequences that take the terminal to the dashboard's screen (the
// alternate one, cursor hidden, bracketed paste on) and back.
const (
	enterScreen = "\x1b[?1049h\x1b[?25l\x1b[?2004h\x1b[2J"
	leaveScreen = "\x1b[?2004l\x1b[?25h\x1b[?1049l"
)

// suspend gives the terminal to run, as the shell had it: the dashboard
// leaves its screen and raw mode, draws nothing meanwhile, and comes back
// to both, repainted whole, once run returns.
func (s *screen) suspend(run func() error) error {
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
	io.WriteString(s.out, leaveScreen)
	term.Restore(s.in.Fd(), s.cooked)
	err := run()
	term.MakeRaw(s.in.Fd())
	io.WriteString(s.out, enterScreen)
	s.mu.Lock()
	s.paused, s.clear = false, true
	frame := s.pending
	s.pending = ""
	s.mu.Unlock()
	s.show(frame)
	if s.resumed != nil {
		select {
		case s.resumed <- syscall.SIGWINCH:
		default: // a size is to be read already
		}
	}
	return err
}

// resized makes the next draw repaint the whole screen.
func (s *screen) resized() {
	s.mu.Lock()
	s.clear = true
	s.mu.Unlock()
}

func (s *screen) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// onScreen is the dashboard's model as the program runs it: every frame it
// computes goes to the screen.
type onScreen struct {
	Model
	scr *screen
}

func (o onScreen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.WindowSizeMsg); ok {
		o.scr.resized()
	}
	m, cmd := o.Model.Update(msg)
	o.Model = m.(Model)
	return o, cmd
}

// View hands the frame to the screen; Bubble Tea, running without a
// renderer, draws nothing itself.
func (o onScreen) View() string {
	o.scr.show(o.Model.View())
	return ""
}

// runOnTerminal runs the program with the screen as its renderer: the
// terminal in raw mode and on the alternate screen, resizes as messages,
// and everything restored on the way out.
func runOnTerminal(m Model, opts []tea.ProgramOption) (tea.Model, error) {
	in, out := os.Stdin, os.Stdout
	if !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		// Not a terminal (a test, a pipe): Bubble Tea's renderer copes.
		return tea.NewProgram(m, append([]tea.ProgramOption{tea.WithAltScreen()}, opts...)...).Run()
	}
	state, err := term.MakeRaw(in.Fd())
	if err != nil {
		return m, err
	}
	defer term.Restore(in.Fd(), state)
	// Alternate screen, cursor hidden, bracketed paste; undone at the end.
	io.WriteString(out, enterScreen)
	defer io.WriteString(out, leaveScreen)
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	scr := &screen{out: out, in: in, cooked: state, resumed: winch}
	defer scr.close()
	m.terminal = scr
	p := tea.NewProgram(onScreen{Model: m, scr: scr}, append([]tea.ProgramOption{tea.WithoutRenderer(), tea.WithOutput(out)}, opts...)...)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sendSize(p, out)
		for {
			select {
			case <-stop:
				return
			case <-winch:
				sendSize(p, out)
			}
		}
	}()
	final, err := p.Run()
	signal.Stop(winch)
	close(stop)
	wg.Wait()
	if o, ok := final.(onScreen); ok {
		return o.Model, err
	}
	return final, err
}

func sendSize(p *tea.Program, out *os.File) {
	if w, h, err := term.GetSize(out.Fd()); err == nil {
		p.Send(tea.WindowSizeMsg{Width: w, Height: h})
	}
}
