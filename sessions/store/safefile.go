package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// SymlinkError is a symlink where zwarm's own file or directory should
// be. zwarm never writes through one: whoever could plant it (an agent
// working in the directory the state dir is in) would otherwise choose
// which file zwarm writes, with zwarm's rights.
type SymlinkError struct{ Path string }

func (e *SymlinkError) Error() string {
	return e.Path + " is a symlink; zwarm does not follow symlinks in its state dir: remove it"
}

// OpenFile opens, and with os.O_CREATE makes, a file zwarm keeps in a
// state dir, never through a symlink: a symlink at path, or at any
// directory between root and path, is a *SymlinkError naming it. root is
// the state dir (itself followed: where it lives is the user's choice);
// "" checks path itself only. The file is closed on exec.
func OpenFile(root, path string, flag int, perm os.FileMode) (*os.File, error) {
	rel := ""
	if root != "" {
		if r, err := filepath.Rel(root, path); err == nil && r != "." && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			rel = r
		}
	}
	if rel == "" {
		root, rel = filepath.Dir(path), filepath.Base(path)
	}
	f, err := openBeneath(root, rel, path, flag, perm)
	if errors.Is(err, unix.ELOOP) {
		return nil, &SymlinkError{Path: firstSymlink(root, rel, path)}
	}
	return f, err
}

// OpenAppend opens a log or transcript in a state dir for appending,
// making it if need be (OpenFile's rules).
func OpenAppend(root, path string) (*os.File, error) {
	return OpenFile(root, path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, FilePerm)
}

// openBeneath opens rel under root with openat2(2), which refuses a
// symlink in any component as one call, so nothing can be swapped in
// between a check and the open. Where the kernel lacks it, each
// directory is checked first and the file opened with O_NOFOLLOW.
func openBeneath(root, rel, path string, flag int, perm os.FileMode) (*os.File, error) {
	dirfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(dirfd)
	how := &unix.OpenHow{
		Flags:   uint64(flag | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Mode:    uint64(perm.Perm()),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH,
	}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(dirfd, rel, how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), path), nil
		case err == unix.EINTR, err == unix.EAGAIN && tries < 10:
			// EAGAIN: a rename raced the lookup; it is safe to look again.
			continue
		case err == unix.ENOSYS, err == unix.EPERM:
			// No openat2 (an old kernel, or a sandbox that filters it).
			if err := CheckNoSymlinks(root, filepath.Dir(path)); err != nil {
				return nil, err
			}
			return os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
}

// firstSymlink names the component of rel under root that is a symlink
// (path if none is any more: it was swapped back meanwhile).
func firstSymlink(root, rel, path string) string {
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return p
		}
	}
	return path
}

// CheckNoSymlinks refuses a symlink at path or any directory between root
// and it, naming it (a *SymlinkError). It is for files made by creating a
// temporary file and renaming it over path: the temporary file is made
// with O_EXCL, and the rename replaces a symlink rather than follows it,
// but a symlinked directory would take both elsewhere.
func CheckNoSymlinks(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // missing: whatever makes it fails or makes a real one
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &SymlinkError{Path: p}
		}
	}
	return nil
}

// refuseSymlink is a *SymlinkError if path is a symlink.
func refuseSymlink(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &SymlinkError{Path: path}
	}
	return nil
}

// WriteFileNoFollow is os.WriteFile that never writes through a symlink.
func WriteFileNoFollow(path string, data []byte) error {
	return WriteFile("", path, data, os.O_TRUNC)
}

// WriteFile writes data to path, a file below root (OpenFile's rules:
// nothing is written through a symlink), made if need be; flag adds to
// os.O_WRONLY|os.O_CREATE: os.O_TRUNC to replace it, os.O_EXCL to refuse
// one already there.
func WriteFile(root, path string, data []byte, flag int) error {
	f, err := OpenFile(root, path, os.O_WRONLY|os.O_CREATE|flag, FilePerm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
