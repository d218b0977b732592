package workspace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/zwarm/zwarm/sessions/proc"
)

// confinement is where a verify command may write (RunVerify): beneath
// its dirs and a temporary dir of its own, its $TMPDIR; with no dirs,
// anywhere.
type confinement struct {
	command string
	dirs    []string
	env     []string // the command's: nil, this process's
	tmp     string
	warn    func(error)
	done    func() // ends the thread the command was started from
}

// confine makes command's confinement to writable (nil: none), and its
// temporary dir.
func confine(command string, writable []string, warn func(error)) (*confinement, error) {
	c := &confinement{command: command, warn: warn, done: func() {}}
	if writable == nil {
		return c, nil
	}
	tmp, err := os.MkdirTemp("", "zwarm-verify-")
	if err != nil {
		return nil, fmt.Errorf("verify %q could not run: %w", command, err)
	}
	c.tmp, c.env = tmp, append(os.Environ(), "TMPDIR="+tmp)
	c.dirs = append(append(slices.Clip(writable), tmp), verifyDevices...)
	// The build tools' caches are the verifies' own, kept from one to
	// the next: a cache of yours it wrote to is one it could poison for
	// your own builds (Go's build cache, npm's, pip's under
	// XDG_CACHE_HOME). Go's module cache stays yours, to read.
	if root, err := os.UserCacheDir(); err == nil {
		caches := filepath.Join(root, "zwarm", "verify")
		if err := os.MkdirAll(caches, 0o700); err == nil {
			c.dirs = append(c.dirs, caches)
			c.env = append(c.env, "GOCACHE="+filepath.Join(caches, "go-build"), "XDG_CACHE_HOME="+filepath.Join(caches, "xdg"),
				"npm_config_cache="+filepath.Join(caches, "npm"))
		}
	}
	return c, nil
}

// verifyDevices are the devices a verify may write: the ones that hold
// nothing (no terminal, no disk), and the shared memory of POSIX
// semaphores and the like.
var verifyDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/shm"}

// start starts cmd confined. A kernel that cannot confine it is warned
// of, and cmd runs with this process's rights.
func (c *confinement) start(cmd *exec.Cmd) error {
	if c.dirs == nil {
		return cmd.Start()
	}
	done, err := proc.StartWritingBeneath(cmd, c.dirs)
	if errors.Is(err, proc.ErrNoLandlock) {
		c.warn(fmt.Errorf("verify %q runs with your rights, able to write anything you can: %w", c.command, err))
		c.dirs = nil
		return cmd.Start()
	}
	if err == nil {
		c.done = done
	}
	return err
}

// close ends the confinement once the command has been waited for.
func (c *confinement) close() {
	c.done()
	if c.tmp != "" {
		os.RemoveAll(c.tmp)
	}
}
