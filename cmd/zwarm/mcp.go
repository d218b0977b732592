package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/orchestrator/mcpserver"
	"github.com/zwarm/zwarm/sessions/config"
)

// mcpSections are the config.toml tables zwarm mcp owns.
var mcpSections = []config.Section{mcpserver.ConfigSection()}

// mcpMinWait is the shortest wait the server allows (0: the orchestrator's
// 10 s). Only tests shorten it, to see a wait time out sooner.
var mcpMinWait time.Duration

func newMCPCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the worker tools to an agent over the Model Context Protocol (stdio)",
		Long: `mcp lets an agent you already use (Claude Code, Codex, an IDE) be the
orchestrator: it serves zwarm's worker tools over MCP on stdin and stdout.
The agent can spawn supervised background workers, wait for them, show what
they did, inject follow-ups, list and kill them. Workers are ordinary zwarm
sessions (source mcp): zwarm ls, show and dash see them, with their turns,
usage and cost, and they keep running when the agent quits.

Workers run in the directory the server was started in and below, and in
the [mcp] table's allowed_dirs. Limits and defaults come from [mcp] in
config.toml: max_workers, allowed_dirs, adapter, model, wait_cap.
Nothing but protocol messages is written to stdout; the log goes to
logs/zwarm.log in the state dir.`,
		Example: `  claude mcp add zwarm -- zwarm mcp
  codex mcp add zwarm -- zwarm mcp
  zwarm mcp --state-dir ~/work/.zwarm`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return runMCP(c.Context(), f) },
	}
}

func runMCP(ctx context.Context, f *factory) error {
	m, err := f.manager()
	if err != nil {
		return err
	}
	cfg, err := m.Config()
	if err != nil {
		return err
	}
	mc := mcpserver.FromConfig(cfg)
	mc.MinWait = mcpMinWait
	if err := mc.Validate(); err != nil {
		return &config.Error{Path: filepath.Join(m.Store().Dir(), config.File), Err: err}
	}
	if mc.Adapter != "" {
		// Refused here, not at each spawn, where the model would read it
		// without knowing it comes from config.toml.
		if _, err := adapters.Builtin().Lookup(mc.Adapter); err != nil {
			return &config.Error{Path: filepath.Join(m.Store().Dir(), config.File), Err: fmt.Errorf("[mcp] adapter: %w", err)}
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("mcp: working directory: %w", err)
	}
	if err := os.MkdirAll(m.Store().Dir(), 0o700); err != nil {
		return fmt.Errorf("mcp: state dir: %w", err)
	}
	log, closeLog, err := fileLogger(m.Store().Dir())
	if err != nil {
		return err
	}
	defer closeLog()
	srv, err := mcpserver.New(mcpserver.Options{Sessions: m, Dir: dir, Config: mc, Log: log.With("cmd", "mcp"), Version: versionString(),
		SeenPath: filepath.Join(m.Store().Dir(), mcpserver.SeenFile)})
	if err != nil {
		return err
	}
	out, err := protocolOut(f.io.Out)
	if err != nil {
		return err
	}
	err = srv.Run(ctx, mcpserver.Stdio(f.io.In, out))
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, unix.EPIPE), ctx.Err() != nil:
		// The client hung up (closed our stdin, or stopped reading our
		// stdout): its normal end. A signal that stopped the
		// server makes the exit 130 (run), as for every command.
		return nil
	}
	return fmt.Errorf("mcp: %w", err)
}

// protocolOut is where protocol messages go. When that is the process's
// stdout, it is moved to a descriptor of its own and stdout becomes stderr:
// nothing else the process (or a child inheriting stdout) writes there can
// corrupt the protocol.
func protocolOut(w io.Writer) (io.WriteCloser, error) {
	if w != io.Writer(os.Stdout) {
		return nopWriteCloser{w}, nil
	}
	fd, err := unix.FcntlInt(os.Stdout.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("mcp: keep stdout for the protocol: %w", err)
	}
	if err := unix.Dup3(int(os.Stderr.Fd()), int(os.Stdout.Fd()), 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("mcp: point stdout at stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "protocol"), nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
