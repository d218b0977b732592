package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/tui"
)

type dashOptions struct {
	f *factory
}

func newDashCmd(f *factory) *cobra.Command {
	o := &dashOptions{f: f}
	return &cobra.Command{
		Use:   "dash",
		Short: "Live dashboard of every session (q quits, ? shows the keys)",
		Args:  exactArgs(0, "no arguments"),
		RunE:  func(c *cobra.Command, _ []string) error { return runDash(c, o) },
	}
}

func runDash(c *cobra.Command, o *dashOptions) error {
	if err := needTerminal(o.f.io, "dash", "; zwarm ls, zwarm logs -f and zwarm watch print without one"); err != nil {
		return err
	}
	m, wc, err := o.f.watched()
	if err != nil {
		return err
	}
	log, closeLog, err := fileLogger(m.Store().Dir())
	if err != nil {
		return err
	}
	defer closeLog()
	cfg, err := m.Config()
	if err != nil {
		return err
	}
	n, err := o.f.notifier(m, cfg, o.f.io.Out, log)
	if err != nil {
		return err
	}
	colorProfile()
	limitDashHeap(o.f.io)
	return tui.Run(c.Context(), m, m.Store().Dir(), wc, log, n, attachCommand(m.Store().Dir()))
}

// attachCommand is zwarm attach run on the dashboard's terminal, in the
// same state dir, as a job of its own: Ctrl+C there is the attach's and
// its CLI's, never the dashboard's.
func attachCommand(stateDir string) tui.AttachCommand {
	return func(id string, interrupt bool) tea.ExecCommand {
		self, err := os.Executable()
		if err != nil {
			self = os.Args[0]
		}
		args := []string{"--state-dir", stateDir, "attach"}
		if interrupt {
			args = append(args, "--interrupt")
		}
		return cli.ForegroundCmd{Cmd: exec.Command(self, append(args, id)...)}
	}
}

// needTerminal refuses to start a full-screen program where there is no
// terminal to draw on, saying what to use instead (Bubble Tea's own
// error names /dev/tty and nothing else).
func needTerminal(io *cli.Streams, what, instead string) error {
	if io.InTTY && io.OutTTY {
		return nil
	}
	return cli.Usagef("%s draws on a terminal, and stdin or stdout is not one: run it in one%s", what, instead)
}

// colorProfile honours NO_COLOR explicitly: the dashboard then draws with
// icons and text only.
func colorProfile() {
	if os.Getenv("NO_COLOR") != "" {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
}

// fileLogger logs to logs/zwarm.log in the state dir: never to the
// terminal the dashboard draws on. A state dir that does not exist is not
// made for it (the dashboard only reads): then nothing is logged.
func fileLogger(stateDir string) (*slog.Logger, func(), error) {
	if _, err := os.Stat(stateDir); errors.Is(err, fs.ErrNotExist) {
		return slog.New(slog.NewTextHandler(io.Discard, nil)), func() {}, nil
	}
	dir := filepath.Join(stateDir, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("log dir: %w", err)
	}
	f, err := state.OpenAppend(stateDir, filepath.Join(dir, "zwarm.log"))
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, nil)), func() { f.Close() }, nil
}
