package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A session's agents run in a cgroup v2 of their own when the machine allows
// it (root, or a user slice delegated by systemd): no descendant can leave
// it, even one that starts a new session and drops ZWARM_SESSION_ID from its
// environment, and cgroup.kill stops them all at once. The cgroup is made
// beside the supervisor, as a child of the cgroup zwarm runs in, and its
// path is written to sessions/<id>/cgroup so a kill finds it without the
// record. Where no cgroup can be made, sessions fall back to the marker
// variable and the supervisor's descendants.

// ownCgroupDir is the cgroup v2 directory this process runs in.
func OwnCgroupDir() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	var path string
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "0::"); ok {
			path = rest
		}
	}
	if path == "" {
		return "", errors.New("cgroup: no cgroup v2 hierarchy in /proc/self/cgroup")
	}
	mount, root, err := Cgroup2Mount()
	if err != nil {
		return "", err
	}
	rel, ok := strings.CutPrefix(path, root)
	if !ok {
		return "", fmt.Errorf("cgroup: %s is outside the mounted hierarchy %s", path, root)
	}
	return filepath.Join(mount, rel), nil
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted and which of
// its directories the mount shows (its root).
func Cgroup2Mount() (mount, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		f := strings.Fields(pre)
		if len(f) < 5 {
			continue
		}
		return unescapeMount(f[4]), unescapeMount(f[3]), nil
	}
	return "", "", errors.New("cgroup: cgroup v2 is not mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// stateXattr, on a session's cgroup, names the state dir the session is
// recorded in: a cgroup whose session is gone from it is an orphan (see
// Orphans).
const StateXattr = "user.zwarm.state"

// taggedFor reports whether the cgroup dir is tagged with stateDir (the
// same directory, however its path was spelled).
func TaggedFor(dir, stateDir string) bool {
	buf := make([]byte, 4096)
	n, err := unix.Getxattr(dir, StateXattr, buf)
	if err != nil {
		return false
	}
	if tag := string(buf[:n]); tag != stateDir {
		a, aerr := os.Stat(tag)
		b, berr := os.Stat(stateDir)
		return aerr == nil && berr == nil && os.SameFile(a, b)
	}
	return true
}

// isSessionCgroup reports whether dir, as a session's cgroup file names
// it, is one a supervisor of session id in stateDir made: zwarm-<id>, in
// the cgroup v2 hierarchy, tagged with the state dir. Anything else (a
// record written by hand, or by someone who may write the state dir but
// not the cgroups) is never killed as the session's.
func IsSessionCgroup(dir, id, stateDir string) bool {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || filepath.Base(dir) != "zwarm-"+id {
		return false
	}
	mount, _, err := Cgroup2Mount()
	if err != nil || !strings.HasPrefix(dir, mount+string(filepath.Separator)) {
		return false
	}
	return TaggedFor(dir, stateDir)
}

// makeCgroup creates (or reuses) the cgroup zwarm-<name> beside the
// cgroup this process runs in, and returns its directory.
func MakeCgroup(name string) (string, error) {
	parent, err := OwnCgroupDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(parent, "zwarm-"+name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("cgroup: %s has no cgroup.kill (Linux 5.14 or later is needed)", dir)
	}
	return dir, nil
}

// Containment says how this machine contains sessions' processes, for
// `zwarm doctor`: in a cgroup of their own, or by marker variable only, and
// why.
func Containment() (string, error) {
	parent, err := OwnCgroupDir()
	if err != nil {
		return "marker", err
	}
	probe := filepath.Join(parent, fmt.Sprintf("zwarm-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return "marker", fmt.Errorf("cannot create cgroups under %s: %w", parent, err)
	}
	defer os.Remove(probe)
	if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err != nil {
		return "marker", fmt.Errorf("cgroups under %s have no cgroup.kill (Linux 5.14 or later is needed)", parent)
	}
	return "cgroup " + parent, nil
}

// killCgroup kills every process in a cgroup and waits until it is empty.
// A missing cgroup is already empty.
func KillCgroup(ctx context.Context, dir string) error {
	if dir == "" {
		return nil
	}
	err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	// ENODEV: the cgroup was removed between the open and the write (its
	// supervisor, settling the session, removes it): it is as empty as a
	// missing one.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENODEV) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", dir, err)
	}
	for Populated(dir) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("cgroup %s: processes still alive after cgroup.kill", dir)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// removeCgroup removes an empty cgroup and every cgroup below it (an agent
// may have made some, and moved into them); a missing one is fine.
func RemoveCgroup(dir string) error {
	if dir == "" {
		return nil
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			if err := RemoveCgroup(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cgroup %s: %w", dir, err)
	}
	return nil
}

// populated reports whether a cgroup still holds a process.
func Populated(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return false
	}
	return bytes.Contains(data, []byte("populated 1"))
}

// cgroupPIDs lists the processes in a cgroup and in every cgroup below it:
// a process of the session may make a cgroup under its own and move into
// it, where the cgroup's own cgroup.procs no longer shows it.
func CgroupPIDs(dir string) []int {
	if dir == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, CgroupPIDs(filepath.Join(dir, e.Name()))...)
		}
	}
	return out
}
