package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"
)

// How a state dir's locks are made. Two schemes, one API (LockFile):
//
//   - flock: flock(2) on a file that stays. The kernel lets go of it when
//     its holder dies, however it dies. It holds only among processes of
//     one machine, or on a file system whose locks are coherent across
//     its clients: an NFS client's flock is a byte-range lock relayed to
//     the server's lock manager, lost or doubled with the lock daemons or
//     a client's lease, and an SMB or FUSE one may be the client's alone.
//   - lease: a lock is a file that exists while it is held (lease.go),
//     made by an atomic create and broken by an atomic rename, which every
//     shared file system performs on the server; it names its holder and
//     is renewed while held, so a dead holder's lock is broken once its
//     lease has run out.
//
// Every process sharing a state dir must use the same scheme, or they do
// not exclude each other. Scheme decides: ZWARM_LOCKS (for tests, and to
// try the lease scheme on a local disk), else [state] locks in the state
// dir's config.toml (which every process sharing the state dir reads),
// else the file system the state dir is on: lease on a network file
// system, flock elsewhere. The file server itself sees its export as a
// local disk: a state dir used both there and through the network must
// say locks = "lease".

// Scheme is how locks are made: SchemeFlock or SchemeLease, or SchemeAuto
// as a setting.
type Scheme string

const (
	SchemeAuto  Scheme = "auto"
	SchemeFlock Scheme = "flock"
	SchemeLease Scheme = "lease"
)

// LocksEnv names the scheme for every state dir of this process and the
// processes it starts, above config.toml.
const LocksEnv = "ZWARM_LOCKS"

// ParseScheme reads a setting: "flock", "lease", or "auto" ("" too).
func ParseScheme(s string) (Scheme, error) {
	switch Scheme(s) {
	case "", SchemeAuto:
		return SchemeAuto, nil
	case SchemeFlock, SchemeLease:
		return Scheme(s), nil
	}
	return "", fmt.Errorf("locks = %q: want \"flock\", \"lease\" or \"auto\"", s)
}

// schemes caches, per state dir (or, with none, per directory), the scheme
// its settings and file system give: it must not change under a process
// that holds its locks, and a network file system's statfs is a round trip.
var schemes sync.Map

// SchemeOf is the scheme of the locks of the state dir root, or, for a
// lock outside any state dir (root ""), of the locks in dir.
func SchemeOf(root, dir string) (Scheme, error) {
	if env := os.Getenv(LocksEnv); env != "" {
		s, err := ParseScheme(env)
		if err != nil {
			return "", fmt.Errorf("%s: %w", LocksEnv, err)
		}
		if s != SchemeAuto {
			return s, nil
		}
	}
	key := root
	if key == "" {
		key = dir
	}
	if s, ok := schemes.Load(key); ok {
		return s.(Scheme), nil
	}
	s := SchemeAuto
	if root != "" {
		var err error
		if s, err = configuredScheme(root); err != nil {
			return "", err
		}
	}
	if s == SchemeAuto {
		s = SchemeFlock
		if onNetworkFS(key) {
			s = SchemeLease
		}
	}
	schemes.Store(key, s)
	return s, nil
}

// UsesLeases says whether the locks of root (or dir) are leases.
func UsesLeases(root, dir string) (bool, error) {
	s, err := SchemeOf(root, dir)
	return s == SchemeLease, err
}

// configuredScheme is [state] locks of root's config.toml. A file that
// cannot be read or parsed says nothing here: the commands that read the
// settings report it.
func configuredScheme(root string) (Scheme, error) {
	var cfg struct {
		State struct {
			Locks string `toml:"locks"`
		} `toml:"state"`
	}
	path := filepath.Join(root, ConfigFile)
	if _, err := toml.DecodeFile(path, &cfg); err != nil {
		return SchemeAuto, nil
	}
	s, err := ParseScheme(cfg.State.Locks)
	if err != nil {
		return "", fmt.Errorf("%s: [state] %w", path, err)
	}
	return s, nil
}

// onNetworkFS says whether dir, or the nearest directory above it that
// exists, is on a file system whose flock does not hold across machines.
func onNetworkFS(dir string) bool {
	for {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		if err == nil {
			return networkFS(uint32(st.Type))
		}
		up := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || up == dir {
			return false
		}
		dir = up
	}
}

// lustreMagic is Lustre's statfs type (x/sys/unix has none): its flock is
// the node's alone unless it is mounted with -o flock.
const lustreMagic = 0x0bd00bd0

// networkFS says whether a statfs f_type is a file system shared over the
// network whose flock is not coherent across its clients (or may not be).
// Cluster file systems with coherent locks (CephFS, GPFS, GFS2, OCFS2)
// keep flock; config.toml can say otherwise.
func networkFS(magic uint32) bool {
	switch magic {
	case unix.NFS_SUPER_MAGIC,
		unix.SMB_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC,
		unix.V9FS_MAGIC,
		unix.AFS_SUPER_MAGIC, unix.AFS_FS_MAGIC,
		unix.CODA_SUPER_MAGIC,
		unix.NCP_SUPER_MAGIC,
		unix.FUSE_SUPER_MAGIC, // sshfs, GlusterFS, s3fs: flock stays on the client
		lustreMagic:
		return true
	}
	return false
}
