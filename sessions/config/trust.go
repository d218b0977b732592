package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"
)

// A state dir's settings name the programs zwarm runs ([adapters.NAME]
// binary, the [worktrees] setup command, an agent's args, the variable
// holding an API key), so they are read only from a state dir this user
// owns, as git reads only a repository its user owns (safe.directory):
// run as root in another user's checkout, zwarm would otherwise run what
// that user put in its config.toml as root. Reading sessions to list
// them is still allowed.

// UserPath is the user's own zwarm settings, outside any state dir:
// $XDG_CONFIG_HOME/zwarm/config.toml, else ~/.config/zwarm/config.toml.
func UserPath() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "zwarm", File), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("where your zwarm settings are: %w (set XDG_CONFIG_HOME or HOME)", err)
	}
	return filepath.Join(home, ".config", "zwarm", File), nil
}

// User is the [trust] table of the user's own config file, which
// only that file may have; its other keys are config.toml's (LoadConfig).
type User struct {
	Trust struct {
		// Dirs are state dirs, or directories above them, whose settings
		// are used although another user owns them or others may write
		// them; "*" is every one.
		Dirs []string `toml:"dirs"`
	} `toml:"trust"`
}

// LoadUser reads the user's own config; a missing file is empty.
// It must be this user's (or root's) and writable by no one else, or it
// could trust anything.
func LoadUser() (*User, string, error) {
	path, err := UserPath()
	if err != nil {
		return nil, "", err
	}
	c := &User{}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, path, nil
	}
	if err != nil {
		return nil, path, &Error{Path: path, Err: err}
	}
	if why := untrustedBy(fi, true); why != "" {
		return nil, path, &Error{Path: path, Err: fmt.Errorf("%s, so its [trust] list is not used: it must be yours, and writable by you alone", why)}
	}
	// Only [trust] is read here; the file's other keys are config.toml's
	// (LoadConfig reads and checks them).
	var raw map[string]toml.Primitive
	md, err := toml.DecodeFile(path, &raw)
	if err != nil {
		return nil, path, &Error{Path: path, Err: err}
	}
	if prim, ok := raw["trust"]; ok {
		if err := md.PrimitiveDecode(prim, &c.Trust); err != nil {
			return nil, path, &Error{Path: path, Err: fmt.Errorf("trust: %w", err)}
		}
	}
	var keys []string
	for _, k := range md.Undecoded() {
		if len(k) > 1 && k[0] == "trust" {
			keys = append(keys, k.String())
		}
	}
	if len(keys) > 0 {
		return nil, path, &Error{Path: path, Err: fmt.Errorf("unknown key %s (known: [trust] dirs)", strings.Join(keys, ", "))}
	}
	for _, t := range c.Trust.Dirs {
		if _, ok := trustEntry(t); !ok && t != "*" {
			return nil, path, &Error{Path: path, Err: fmt.Errorf("[trust] dirs entry %q must be an absolute path or ~/... (or \"*\")", t)}
		}
	}
	return c, path, nil
}

// trusts says dir (absolute) is, or is under, one of the trusted dirs,
// compared as named and as real paths, so that an entry naming a symlink
// trusts what it points to.
func (c *User) trusts(dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	for _, t := range c.Trust.Dirs {
		if t == "*" {
			return true
		}
		t, ok := trustEntry(t)
		if !ok {
			continue
		}
		ts := []string{t}
		if r, err := filepath.EvalSymlinks(t); err == nil && r != t {
			ts = append(ts, r)
		}
		for _, t := range ts {
			for _, d := range []string{dir, real} {
				if d == t || strings.HasPrefix(d, t+string(filepath.Separator)) || t == "/" {
					return true
				}
			}
		}
	}
	return false
}

// trustEntry is a [trust] dirs entry as a clean absolute path, "~/"
// expanded; false for a relative one, which names no one directory.
func trustEntry(t string) (string, bool) {
	if t == "~" {
		t = "~/"
	}
	if rest, ok := strings.CutPrefix(t, "~/"); ok {
		home, _ := os.UserHomeDir()
		if home == "" {
			return "", false
		}
		t = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(t) {
		return "", false
	}
	return filepath.Clean(t), true
}

// UntrustedError is a state dir whose settings are not read: it, one of
// its settings files, or a directory it is in belongs to another user or
// can be written by others.
type UntrustedError struct {
	Dir        string // the state dir
	Path       string // what is not trusted
	Why        string // whose it is, or who may write it
	UserConfig string // where the user trusts it
}

func (e *UntrustedError) Error() string {
	fix := ""
	if strings.HasPrefix(e.Why, "can be written") {
		fix = fmt.Sprintf("make it writable by you alone (chmod go-w %s), or ", e.Path)
	}
	return fmt.Sprintf("%s %s: zwarm reads no settings from a state dir it does not trust, since they name the programs it runs; "+
		"%sif you trust it, add it to your own config %s:\n  [trust]\n  dirs = [%q]", e.Path, e.Why, fix, e.UserConfig, e.Dir)
}

// CheckTrusted refuses a state dir whose settings this user must not run:
// the state dir and its *.toml files must be this user's and writable by
// no one else, and each directory above it this user's or root's and
// writable by no one else (unless sticky, as /tmp), unless the user's own
// config trusts it ([trust] dirs). What is judged is what would be read:
// a symlinked state dir or settings file by its target, and every
// directory looked in on the way to it, as ssh judges its files
// (StrictModes) on their real paths.
func CheckTrusted(stateDir string) error {
	dir, err := filepath.Abs(stateDir)
	if err != nil {
		return err
	}
	var bad *UntrustedError
	fail := func(path, why string) {
		if bad == nil {
			bad = &UntrustedError{Dir: dir, Path: path, Why: why}
		}
	}
	checked := map[string]bool{}
	checkDirs := func(dirs []string) {
		for _, d := range dirs {
			if checked[d] {
				continue
			}
			checked[d] = true
			if fi, err := os.Stat(d); err == nil {
				if why := untrustedBy(fi, true); why != "" {
					fail(d, why)
				}
			}
		}
	}
	// A state dir not made yet has no settings, but the one made there
	// would be another user's to replace: its directories are checked.
	real, looked := resolvePath(dir)
	if fi, err := os.Stat(real); err == nil {
		if why := untrustedBy(fi, false); why != "" {
			fail(real, why)
		}
	}
	if ents, err := os.ReadDir(real); err == nil {
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".toml") {
				continue
			}
			// real is resolved already: only a symlink leads elsewhere,
			// through directories of its own.
			p, via := filepath.Join(real, e.Name()), []string(nil)
			if e.Type()&fs.ModeSymlink != 0 {
				p, via = resolvePath(p)
			}
			if fi, err := os.Stat(p); err == nil {
				if why := untrustedBy(fi, false); why != "" {
					fail(p, why)
				}
			}
			checkDirs(via)
		}
	}
	checkDirs(looked)
	if bad == nil {
		return nil
	}
	uc, path, err := LoadUser()
	if err != nil {
		return err
	}
	if uc.trusts(dir) {
		return nil
	}
	bad.UserConfig = path
	return bad
}

// resolvePath follows path (absolute) as the kernel would, component by
// component and through every symlink, to the real path it names, and
// says which directories were looked in on the way: whoever may write one
// of them chooses what path names. Components past one that does not
// exist are kept as they are; a symlink loop ends the walk where it is.
func resolvePath(path string) (real string, looked []string) {
	seen := map[string]bool{}
	look := func(d string) {
		if !seen[d] {
			seen[d] = true
			looked = append(looked, d)
		}
	}
	rest := strings.Split(filepath.Clean(path), string(filepath.Separator))
	real = string(filepath.Separator)
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			real = filepath.Dir(real)
			continue
		}
		look(real)
		next := filepath.Join(real, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 || hops > 255 {
			real = next
			if err != nil {
				return filepath.Join(append([]string{real}, rest...)...), looked
			}
			continue
		}
		hops++
		target, err := os.Readlink(next)
		if err != nil {
			real = next
			continue
		}
		if filepath.IsAbs(target) {
			real = string(filepath.Separator)
		}
		rest = append(strings.Split(target, string(filepath.Separator)), rest...)
	}
	return real, looked
}

// untrustedBy says why a file or directory is not this user's to trust
// ("" if it is): another user owns it (root too, unless rootOK), or
// others may write it (a sticky directory excepted: there only the owner
// of an entry may replace it).
func untrustedBy(fi fs.FileInfo, rootOK bool) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	me := os.Geteuid()
	if uid := int(st.Uid); uid != me && !(rootOK && uid == 0) {
		return fmt.Sprintf("is owned by %s, not by you, %s", userName(uid), userName(me))
	}
	if fi.Mode().Perm()&0o022 != 0 && !(fi.IsDir() && fi.Mode()&fs.ModeSticky != 0) {
		return fmt.Sprintf("can be written by others (mode %04o)", fi.Mode().Perm())
	}
	return ""
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// trusted refuses, before anything runs, to act on a state dir whose
// settings cannot be trusted (CheckTrusted).
