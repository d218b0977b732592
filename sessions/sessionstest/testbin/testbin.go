// Package testbin lets a package's test binary stand in for the programs its
// tests run (zwarm itself, its supervisor), so that no test has to build
// them: TestMain calls Serve before anything else, and a test runs the
// program through the link Link makes (or through its own executable with
// Env set).
//
// A process started as a program keeps Env set to the program's name, so
// when it starts itself again (zwarm starts its supervisor through
// os.Executable, which is the test binary) the new process is that program
// too. Everything else the tests start inherits Env and ignores it.
package testbin

import (
	"os"
	"path/filepath"
)

// Env names the program a test binary runs as, when it is not started
// through a link of that name.
const Env = "ZWARM_TESTBIN"

// Program is a program's main: the arguments after its name in, the exit
// code out.
type Program func(args []string) int

// Serve runs the program this process was started as and exits with its
// code: the one whose name is the base name of os.Args[0] (a link made by
// Link), else the one Env names. When it was started as none of progs,
// Serve returns and the tests run.
func Serve(progs map[string]Program) {
	name := filepath.Base(os.Args[0])
	p, ok := progs[name]
	if !ok {
		name = os.Getenv(Env)
		p, ok = progs[name]
	}
	if !ok {
		return
	}
	os.Setenv(Env, name)
	os.Exit(p(os.Args[1:]))
}

// Link makes dir/name a symbolic link to the running test binary and
// returns its path: running it runs the program Serve knows by name.
func Link(dir, name string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := os.Symlink(exe, path); err != nil {
		return "", err
	}
	return path, nil
}
