package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrNoLandlock is a kernel that cannot confine a process's writes as
// zwarm needs (Landlock from its third version, Linux 6.2, which covers
// truncation and renames across directories): nothing was started.
var ErrNoLandlock = errors.New("this kernel cannot confine a process's writes (Landlock 3, Linux 6.2, is missing or turned off)")

// Confined is the command line that runs argv able to write only beneath
// paths (a directory: anything in it; a file: that file; one that is not
// there is left out): it and everything it starts may read and run
// anything, as before, but may not write, make, remove, rename or
// truncate a file anywhere else, whatever the file's permissions say,
// nor use a device's ioctls (a terminal's would let it type into your
// shell), nor (Landlock 6, Linux 6.12, on) signal a process outside it or
// connect to an abstract Unix socket bound outside. It can still change
// the permissions and times of files you own, which Landlock does not
// cover. Nothing it does can lift the confinement.
//
// helper is this program's own command line for RunConfined (zwarm
// __confine): a process of its own confines itself and then becomes
// argv, so that nothing of the process that started it is in the
// confinement (a thread of it would be, to the confined process, one it
// may ptrace and signal).
func Confined(helper, paths, argv []string) []string {
	line := append([]string(nil), helper...)
	for _, p := range paths {
		line = append(line, "--write", p)
	}
	return append(append(line, "--"), argv...)
}

// CanConfine reports whether this kernel can confine (ErrNoLandlock).
func CanConfine() bool { return writeRights(landlockABI()) != 0 }

// RunConfined is the helper's process: "--write PATH"..., "--", then the
// command, which it becomes (execve) once it has confined itself. Its
// exit code is 127 when it could not.
func RunConfined(args []string) int {
	var paths []string
	for len(args) >= 2 && args[0] == "--write" {
		paths, args = append(paths, args[1]), args[2:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "zwarm: __confine: give the command after --")
		return 127
	}
	bin, err := exec.LookPath(args[0])
	if err == nil {
		// The thread that confines itself is the one that execs: the
		// new program has its confinement, and no other thread is left.
		runtime.LockOSThread()
		if err = confineSelf(paths); err == nil {
			err = syscall.Exec(bin, args, os.Environ())
		}
	}
	fmt.Fprintf(os.Stderr, "zwarm: cannot run %s confined: %v\n", args[0], err)
	return 127
}

// confineSelf confines the calling thread to writing beneath paths.
func confineSelf(paths []string) error {
	abi := landlockABI()
	rights := writeRights(abi)
	if rights == 0 {
		return ErrNoLandlock
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: rights, Scoped: scopes(abi)}
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
	// nothing the command runs gains privileges by exec (a setuid
	// binary), which could write where the confinement does not reach.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("confine writes: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, rfd, 0, 0); errno != 0 {
		return fmt.Errorf("confine writes: %w", errno)
	}
	return nil
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

// writeRights are the rights that change the file system, 0 where the
// kernel's Landlock version cannot confine as zwarm needs: before its
// third, truncating a file by its path was not covered, and every rename
// or link across directories was refused (git, cargo and most build
// tools make files so).
func writeRights(abi int) uint64 {
	if abi < 3 {
		return 0
	}
	r := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE)
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV // granted nowhere
	}
	return r
}

// fileRights are the rights a rule on a file (not a directory) may give.
const fileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
