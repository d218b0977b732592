package tui

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions/record"
)

// Attaching (A) gives the terminal to zwarm attach for the selected
// session: the dashboard leaves its screen, the person works in the
// worker's own CLI, and the dashboard comes back when they leave it. A
// running turn is stopped first, once the person confirms. What attach
// says when it fails stays on the terminal until the person presses
// Enter: the dashboard's screen would hide it.

// suspender is a terminal that another program can be given for a while.
type suspender interface {
	suspend(run func() error) error
}

// attachedMsg is an attach's end.
type attachedMsg struct {
	id  string
	err error
}

// attachRefusal says why sel cannot be attached now, nil when it can
// (interrupt: its running turn would be stopped first).
func attachRefusal(sel *record.Session) (interrupt bool, err error) {
	id := record.ShortID(sel.ID)
	switch {
	case sel.Settled():
		return false, nil
	case sel.Interruptible():
		return true, nil
	case sel.Status() == record.StatusAttached:
		return false, fmt.Errorf("%s is attached already: someone works in its CLI", id)
	}
	return false, fmt.Errorf("%s is %s and cannot be attached now: %s", id, sel.Status(), sel.NotInterruptible())
}

// openAttach attaches to sel, or asks first when that stops its turn.
func (m *Model) openAttach(sel *record.Session) tea.Cmd {
	if m.opt.Attach == nil {
		m.setError(errors.New("this dashboard attaches to no worker (a demo's are replays, with no CLI to work in)"))
		return nil
	}
	interrupt, err := attachRefusal(sel)
	switch {
	case err != nil:
		m.setError(err)
		return nil
	case interrupt:
		m.prompt.OpenConfirm("attach", sel.ID, fmt.Sprintf("stop %s's turn and attach to it?", record.ShortID(sel.ID)))
		m.layout()
		return nil
	}
	return m.attach(sel.ID, false)
}

// attach gives the terminal to the attach command for session id.
func (m *Model) attach(id string, interrupt bool) tea.Cmd {
	m.setStatus("attaching to " + record.ShortID(id) + "…")
	c := &handedOver{ExecCommand: m.opt.Attach(id, interrupt), terminal: m.terminal}
	return tea.Exec(c, func(err error) tea.Msg { return attachedMsg{id: id, err: err} })
}

func (m *Model) onAttached(msg attachedMsg) {
	id := record.ShortID(msg.id)
	var exit *exec.ExitError
	switch {
	case errors.As(msg.err, &exit):
		m.setError(fmt.Errorf("zwarm attach %s exited %d", id, exit.ExitCode()))
	case msg.err != nil:
		m.setError(fmt.Errorf("zwarm attach %s: %w", id, msg.err))
	default:
		m.setStatus("back from " + id + ": zwarm show " + id + " lists its attached spans, with what they committed")
	}
}

// handedOver runs a command on the terminal the dashboard leaves to it,
// and keeps what a failing one said on the terminal until Enter.
type handedOver struct {
	tea.ExecCommand
	terminal suspender
	in       io.Reader
	errOut   io.Writer
}

func (h *handedOver) SetStdin(r io.Reader) {
	h.in = r
	h.ExecCommand.SetStdin(r)
}

func (h *handedOver) SetStderr(w io.Writer) {
	h.errOut = w
	h.ExecCommand.SetStderr(w)
}

func (h *handedOver) Run() error {
	run := func() error {
		err := h.ExecCommand.Run()
		if err != nil && h.in != nil {
			w := h.errOut
			if w == nil {
				w = os.Stderr
			}
			fmt.Fprint(w, "\r\nzwarm: press Enter to go back to the dashboard ")
			bufio.NewReader(h.in).ReadString('\n')
		}
		return err
	}
	if h.terminal == nil {
		return run()
	}
	return h.terminal.suspend(run)
}
