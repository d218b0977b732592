package workspace

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openPlain opens, to read, a file of a worktree, where the worker may
// have put anything: a FIFO or a device is never waited on (O_NONBLOCK
// makes the open return at once), a symlink never followed (it could lead
// to /dev/zero or a FIFO elsewhere), and anything but a regular file is
// refused. It returns what it found there, so the caller need not stat
// it again.
func openPlain(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
