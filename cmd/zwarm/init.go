package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
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
config.toml. In a git repository, .zwarm/ is added to .gitignore: it holds
transcripts, which may hold code and secrets. Commands run anywhere below
this directory use it.`,
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
	if err := os.MkdirAll(filepath.Join(abs, "sessions"), 0o700); err != nil {
		return fmt.Errorf("init %s: %w", abs, err)
	}
	cfg := filepath.Join(abs, sessions.ConfigFile)
	switch _, err := os.Stat(cfg); {
	case err == nil:
		fmt.Fprintf(io.out, "%s already has a %s: left as it is\n", abs, sessions.ConfigFile)
	case errors.Is(err, fs.ErrNotExist):
		if err := os.WriteFile(cfg, exampleConfig, 0o600); err != nil {
			return fmt.Errorf("init: %w", err)
		}
		fmt.Fprintf(io.out, "made %s with a commented %s\n", abs, sessions.ConfigFile)
	default:
		return fmt.Errorf("init: %w", err)
	}
	if repo := gitRoot(filepath.Dir(abs)); repo != "" {
		added, err := ignoreStateDir(filepath.Dir(abs), filepath.Base(abs))
		if err != nil {
			return fmt.Errorf("init: .gitignore: %w", err)
		}
		if added {
			fmt.Fprintf(io.out, "added %s/ to %s\n", filepath.Base(abs), filepath.Join(filepath.Dir(abs), ".gitignore"))
		}
	}
	return nil
}

// gitRoot is the git work tree dir holds, "" if none: the nearest
// directory with a .git (a directory, or a file in a worktree).
func gitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// ignoreStateDir adds name/ to dir's .gitignore unless a line already
// ignores it. It reports whether it added the line.
func ignoreStateDir(dir, name string) (bool, error) {
	path := filepath.Join(dir, ".gitignore")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(l) {
		case name, name + "/", "/" + name, "/" + name + "/":
			return false, nil
		}
	}
	var b strings.Builder
	b.Write(data)
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("# zwarm's state: transcripts of agent sessions\n" + name + "/\n")
	return true, os.WriteFile(path, []byte(b.String()), 0o644)
}
