package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrNoLandlock is a kernel that cannot confine a process's writes
// (Landlock, Linux 5.13 on, is missing or turned off): nothing was
// started.
var ErrNoLandlock = errors.New("this kernel cannot confine a process's writes (no Landlock)")

// StartWritingBeneath starts cmd able to write only beneath paths (a
// directory: anything in it; a file: that file; one that is not there is
// left out): it and everything it starts may read and run anything, as
// before, but may not write, make, remove, rename or truncate a file
// anywhere else, whatever the file's permissions say, nor (where the
// kernel can) use a device's ioctls, which a terminal's would let it type
// into your shell, or signal a process outside it. It can still change
// the permissions and times of files you own, which Landlock does not
// cover. Nothing it does can lift the confinement. cmd's own files (a nil
// Stdout's /dev/null) are opened under it too.
//
// The confinement is Landlock's, put on one thread of this process that
// does nothing else, from which cmd is forked and inherits it: the rest
// of the process, and all it starts later, are as they were. done ends
// that thread; call it once cmd has been waited for: a death signal
// (Pdeathsig) is sent when the thread that started a process ends.
func StartWritingBeneath(cmd *exec.Cmd, paths []string) (done func(), err error) {
	abi := landlockABI()
	rights := writeRights(abi)
	if rights == 0 {
		return nil, ErrNoLandlock
	}
	started, release := make(chan error, 1), make(chan struct{})
	go func() {
		// Never unlocked: the runtime ends the thread, and its
		// confinement with it, when this goroutine returns.
		runtime.LockOSThread()
		err := startConfined(cmd, paths, rights, scopes(abi))
		started <- err
		if err == nil {
			<-release
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { close(release) }) }, nil
}

// LandlockAvailable reports whether StartWritingBeneath can confine.
func LandlockAvailable() bool { return writeRights(landlockABI()) != 0 }

func startConfined(cmd *exec.Cmd, paths []string, rights, scoped uint64) error {
	attr := unix.LandlockRulesetAttr{Handled_access_fs: rights, Scoped: scoped}
	rfd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("confine writes: %w", errno)
	}
	defer unix.Close(int(rfd))
	for _, path := range paths {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("confine writes to %s: %w", path, err)
		}
		allowed := rights &^ unix.LANDLOCK_ACCESS_FS_IOCTL_DEV // no device's ioctls, anywhere
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			allowed &= fileRights // a file takes only the rights of a file
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: allowed, Parent_fd: int32(fd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, rfd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		unix.Close(fd)
		if errno != 0 {
			return fmt.Errorf("confine writes to %s: %w", path, errno)
		}
	}
	// Without it only a privileged thread may confine itself; with it,
	// nothing cmd runs gains privileges by exec (a setuid binary), which
	// could write where the confinement does not reach.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("confine writes: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, rfd, 0, 0); errno != 0 {
		return fmt.Errorf("confine writes: %w", errno)
	}
	return cmd.Start()
}

// landlockABI is the kernel's Landlock version, 0 without it.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// scopes keep the confined processes to themselves, where the kernel's
// Landlock version can (6 on): no signal to a process outside them (your
// editor, zwarm), no connection to an abstract Unix socket bound outside.
func scopes(abi int) uint64 {
	if abi < 6 {
		return 0
	}
	return unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
}

// writeRights are the rights that change the file system, as far as the
// kernel's Landlock version knows them.
func writeRights(abi int) uint64 {
	if abi < 1 {
		return 0
	}
	r := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER // a rename or link across directories
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV // granted nowhere
	}
	return r
}

// fileRights are the rights a rule on a file (not a directory) may give.
const fileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
