package workspace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	c.tmp, c.dirs, c.env = tmp, append(slices.Clip(writable), tmp), append(os.Environ(), "TMPDIR="+tmp)
	return c, nil
}

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
