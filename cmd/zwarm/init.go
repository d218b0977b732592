package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/state"
)

// exampleConfig is .zwarm-example/config.toml (a test keeps the two equal).
//
//go:embed config.example.toml
var exampleConfig []byte

type initOptions struct {
	f *factory
}

func newInitCmd(f *factory) *cobra.Command {
	o := &initOptions{f: f}
	return &cobra.Command{
		Use:   "init",
		Short: "Make a state dir here: .zwarm/ with a commented config.toml",
		Long: `Make .zwarm/ in the current directory (or --state-dir), with a commented
config.toml. The state dir ignores itself in git (.zwarm/.gitignore holds
"*"): it holds transcripts, which may hold code and secrets, and it never
dirties the repository. Commands run anywhere below this directory, and in
the repository's linked worktrees (a worker's among them), use it.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return runInit(o) },
	}
}

func runInit(o *initOptions) error {
	dir := o.f.stateDir
	if dir == "" {
		dir = os.Getenv(StateDirEnv)
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dir = filepath.Join(wd, stateDirName)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	io := o.f.io
	st, err := state.NewStore(abs)
	if err != nil {
		return err
	}
	if err := st.Prepare(); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	cfg := filepath.Join(abs, config.File)
	switch fi, err := os.Lstat(cfg); {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		// Settings are read through a symlink (judged by its target), but
		// init makes no file through one.
		if _, err := os.Stat(cfg); err != nil {
			return fmt.Errorf("init: %w", symlinkConfig(cfg))
		}
		fmt.Fprintf(io.Out, "%s already has a %s: left as it is\n", abs, config.File)
	case err == nil:
		fmt.Fprintf(io.Out, "%s already has a %s: left as it is\n", abs, config.File)
	case errors.Is(err, fs.ErrNotExist):
		// O_EXCL: a file or symlink already there is an error, so nothing
		// is written through a planted symlink.
		if err := state.WriteFile(abs, cfg, exampleConfig, os.O_EXCL); err != nil {
			fi, lerr := os.Lstat(cfg)
			switch {
			case errors.Is(err, fs.ErrExist) && lerr == nil && fi.Mode()&fs.ModeSymlink != 0:
				err = symlinkConfig(cfg) // planted meanwhile
			case errors.Is(err, fs.ErrExist) && lerr == nil && fi.Mode().IsRegular():
				// Another init made it meanwhile: the same outcome.
				fmt.Fprintf(io.Out, "%s already has a %s: left as it is\n", abs, config.File)
				return nil
			}
			return fmt.Errorf("init: %w", err)
		}
		fmt.Fprintf(io.Out, "made %s with a commented %s (it ignores itself in git)\n", abs, config.File)
	default:
		return fmt.Errorf("init: %w", err)
	}
	return nil
}

// danglingConfigError is a config.toml that is a symlink to nothing: init
// does not make the file it points to.
type danglingConfigError struct {
	*state.SymlinkError
	target string
}

func (e *danglingConfigError) Error() string {
	return fmt.Sprintf("%s is a symlink to %s, which does not exist; zwarm does not write through a symlink: "+
		"remove the symlink, or make the file it points to", e.Path, e.target)
}

func (e *danglingConfigError) Unwrap() error { return e.SymlinkError }

func symlinkConfig(path string) error {
	target, err := os.Readlink(path)
	if err != nil {
		return &state.SymlinkError{Path: path}
	}
	return &danglingConfigError{SymlinkError: &state.SymlinkError{Path: path}, target: target}
}
