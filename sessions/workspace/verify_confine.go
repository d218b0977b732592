package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zwarm/zwarm/sessions/proc"
)

// confinement is where a verify command may write (RunVerify): beneath
// its dirs and a temporary dir of its own, its $TMPDIR; with no dirs,
// anywhere. helper is the command line that confines a command
// (proc.Confined).
type confinement struct {
	command string
	helper  []string
	dirs    []string
	env     []string // the command's
	tmp     string
}

// confine makes the confinement of command, the verify run name, to
// writable (nil: none), and its temporary dir and caches. Without a helper, or on a kernel that cannot
// confine, warn hears that it runs with your rights.
func confine(command, name string, helper, writable []string, warn func(error)) (*confinement, error) {
	// Its processes carry the run's marker: one that leaves its process
	// group (setsid) is found by it where no cgroup holds them all.
	c := &confinement{command: command, helper: helper, env: append(os.Environ(), proc.MarkerEnv+"="+name)}
	if writable == nil {
		return c, nil
	}
	switch {
	case helper == nil:
		warn(fmt.Errorf("verify %q runs with your rights, able to write anything you can: nothing here confines it", command))
		return c, nil
	case !proc.CanConfine():
		warn(fmt.Errorf("verify %q runs with your rights, able to write anything you can: %w", command, proc.ErrNoLandlock))
		return c, nil
	}
	tmp, err := os.MkdirTemp("", "zwarm-verify-")
	if err != nil {
		return nil, fmt.Errorf("verify %q could not run: %w", command, err)
	}
	c.tmp, c.env = tmp, append(c.env, "TMPDIR="+tmp, "JAVA_TOOL_OPTIONS="+strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+" -Djava.io.tmpdir="+tmp))
	c.dirs = append(append(slices.Clip(writable), tmp), verifyDevices...)
	// The build tools' caches are the run's own, empty at its start and
	// gone with its temporary dir: a cache it shared, with you or with
	// another worker's verify, is one it could poison (Go does not check
	// what it reads from its build cache), to run its code in your builds
	// or make another worker's failing tests pass. Go's module cache
	// stays yours, to read.
	c.env = append(c.env, "GOCACHE="+filepath.Join(tmp, "go-build"), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"npm_config_cache="+filepath.Join(tmp, "npm"))
	return c, nil
}

// verifyDevices are the devices a verify may write: the ones that hold
// nothing (no terminal, no disk). Not /dev/shm, which your programs share
// and nothing cleans after it (verify_writable names it for a test suite
// that needs POSIX shared memory).
var verifyDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// argv is the command line that runs argv, confined when it is.
func (c *confinement) argv(argv []string) []string {
	if c.dirs == nil {
		return argv
	}
	return proc.Confined(c.helper, c.dirs, argv)
}

// close removes the temporary dir once the command has been waited for.
func (c *confinement) close() {
	if c.tmp != "" {
		os.RemoveAll(c.tmp)
	}
}
