package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/watchers/notify"
)

// notifySection is the [notify] table.
var notifySection = notify.ConfigSection()

const notifyCmd = "__notify"

// newNotifyCmd is the hidden command a notifier starts for each event it
// sends: it runs the [notify] command and stops it at the timeout, apart
// from the process that saw the event, which never waits for it.
func newNotifyCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:    notifyCmd + " TIMEOUT COMMAND",
		Hidden: true,
		Args:   exactArgs(2, "a timeout and a command"),
		RunE: func(c *cobra.Command, args []string) error {
			timeout, err := time.ParseDuration(args[0])
			if err != nil {
				return cli.Usagef("timeout %q: %v", args[0], err)
			}
			log, closeLog, lerr := fileLogger(f.state().dir)
			if lerr == nil {
				defer closeLog()
			}
			if err := notify.Run(context.Background(), timeout, args[1]); err != nil {
				if lerr == nil {
					log.Warn("notify", "event", os.Getenv("ZWARM_EVENT"), "id", os.Getenv("ZWARM_ID"), "err", err)
				}
				return err
			}
			return nil
		},
	}
}

// notifier is the state dir's notifier, per its [notify] table; bell is
// the terminal to ring (nil: none).
func (f *factory) notifier(m *sessions.Manager, cfg *config.Config, bell io.Writer, log *slog.Logger) (*notify.Notifier, error) {
	nc := notify.FromConfig(cfg)
	if err := nc.Validate(); err != nil {
		return nil, &config.Error{Path: filepath.Join(m.Store().Dir(), config.File), Err: err}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return notify.New(nc, notify.Options{Runner: []string{exe, "--state-dir", m.Store().Dir(), notifyCmd}, Bell: bell, Log: log}), nil
}
