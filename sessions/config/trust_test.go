package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// untrusted says err is the refusal naming path and why.
func untrusted(t *testing.T, what string, err error, path, why string) {
	t.Helper()
	var ue *UntrustedError
	if !errors.As(err, &ue) || ue.Path != path || !strings.Contains(ue.Why, why) {
		t.Errorf("%s: want %s refused (%s), got %v", what, path, why, err)
		return
	}
	if msg := err.Error(); !strings.Contains(msg, "[trust]") || !strings.Contains(msg, ue.UserConfig) || ue.UserConfig == "" {
		t.Errorf("%s: %q does not say how to trust it", what, msg)
	}
}

func userConfig(t *testing.T, body string) string {
	t.Helper()
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	path := filepath.Join(xdg, "zwarm", File)
	if body != "" {
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// The settings of a state dir name the programs zwarm runs: they are read
// only from one that is this user's and that no one else may write, or one
// the user's own config trusts.
func TestSettingsAreReadOnlyFromATrustedStateDir(t *testing.T) {
	userConfig(t, "")
	dir := filepath.Join(t.TempDir(), "state")
	os.Mkdir(dir, 0o700)
	cfg := filepath.Join(dir, File)
	os.WriteFile(cfg, []byte("[adapters.codex]\nbinary = \"./evil.sh\"\n"), 0o600)
	codex := filepath.Join(dir, "codex.toml")
	os.WriteFile(codex, []byte("model = \"x\"\n"), 0o600)
	if _, err := Load(dir); err != nil {
		t.Fatalf("the user's own state dir: %v", err)
	}

	os.Chmod(cfg, 0o620)
	_, err := Load(dir)
	untrusted(t, "a group-writable config.toml", err, cfg, "can be written by others")
	os.Chmod(cfg, 0o600)

	os.Chmod(codex, 0o606)
	untrusted(t, "a world-writable codex.toml", CheckTrusted(dir), codex, "can be written by others")
	os.Chmod(codex, 0o600)

	os.Chmod(dir, 0o770)
	untrusted(t, "a group-writable state dir", CheckTrusted(dir), dir, "can be written by others")
	os.Chmod(dir, 0o700)

	// A directory above it that others may write: they could put another
	// state dir in its place. A sticky one (/tmp) is fine.
	parent := filepath.Dir(dir)
	os.Chmod(parent, 0o777)
	untrusted(t, "a world-writable parent", CheckTrusted(dir), parent, "can be written by others")
	os.Chmod(parent, 0o777|os.ModeSticky)
	if err := CheckTrusted(dir); err != nil {
		t.Errorf("a sticky parent: %v", err)
	}
	os.Chmod(parent, 0o700)

	if os.Geteuid() == 0 {
		for _, p := range []string{dir, cfg} {
			os.Chown(p, 65534, 65534)
		}
		_, err := Load(dir)
		untrusted(t, "another user's state dir", err, dir, "is owned by")
		if err == nil || !strings.Contains(err.Error(), "uid 65534") {
			t.Errorf("the owner is not named: %v", err)
		}
		os.Chown(dir, 0, 0)
		untrusted(t, "another user's config.toml", CheckTrusted(dir), cfg, "is owned by")
		os.Chown(dir, 65534, 65534)
		defer os.Chown(dir, 0, 0)
		defer os.Chown(cfg, 0, 0)
	} else {
		os.Chmod(cfg, 0o666)
	}
	if CheckTrusted(dir) == nil {
		t.Fatal("the state dir is trusted before the user trusts it")
	}

	for _, body := range []string{
		"[trust]\ndirs = [\"" + dir + "\"]\n",
		"[trust]\ndirs = [\"" + filepath.Dir(dir) + "\"]\n",
		"[trust]\ndirs = [\"*\"]\n",
	} {
		userConfig(t, body)
		if _, err := Load(dir); err != nil {
			t.Errorf("trusted by %q: %v", body, err)
		}
	}
	for _, body := range []string{
		"[trust]\ndirs = [\"" + dir + "-other\"]\n",
		"[trust]\ndirs = [\"state\"]\n",
	} {
		userConfig(t, body)
		if CheckTrusted(dir) == nil {
			t.Errorf("%q trusts it", body)
		}
	}
	// A user config others may write trusts nothing, and says so.
	path := userConfig(t, "[trust]\ndirs = [\"*\"]\n")
	os.Chmod(path, 0o666)
	var ce *Error
	if err := CheckTrusted(dir); !errors.As(err, &ce) || ce.Path != path {
		t.Errorf("a world-writable user config: %v", err)
	}
	path = userConfig(t, "[trust]\ndir = [\"*\"]\n")
	if err := CheckTrusted(dir); !errors.As(err, &ce) || !strings.Contains(err.Error(), "unknown key trust.dir") {
		t.Errorf("a typo in the user config: %v", err)
	}
}

// Trust is judged on what is really read: a state dir that is a symlink
// by its target and the directories above the target, and a settings file
// that is a symlink by the file it points to and every directory on the
// way there.
func TestTrustIsJudgedOnWhatSymlinksPointTo(t *testing.T) {
	userConfig(t, "")
	base := t.TempDir()
	mkdir := func(p string, mode os.FileMode) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, at string) string {
		t.Helper()
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	open := mkdir(filepath.Join(base, "open"), 0o777) // anyone may replace what is in it
	defer os.Chmod(open, 0o700)
	mkdir(filepath.Join(open, "sd"), 0o700)
	mkdir(filepath.Join(open, "cfg"), 0o700)
	os.WriteFile(filepath.Join(open, "config.toml"), []byte("default_adapter = \"codex\"\n"), 0o600)
	os.WriteFile(filepath.Join(open, "cfg", "codex.toml"), []byte("model = \"x\"\n"), 0o600)

	proj := mkdir(filepath.Join(base, "proj"), 0o700)
	sd := link(filepath.Join(open, "sd"), filepath.Join(proj, ".zwarm"))
	untrusted(t, "a state dir linked into a world-writable dir", CheckTrusted(sd), open, "can be written by others")
	if _, err := Load(sd); err == nil {
		t.Error("settings are read from a state dir linked into a world-writable dir")
	}

	// The same, relatively, and through a symlinked directory on the way.
	proj2 := mkdir(filepath.Join(base, "proj2"), 0o700)
	link("../open", filepath.Join(proj2, "via"))
	sd2 := link("via/sd", filepath.Join(proj2, ".zwarm"))
	untrusted(t, "a state dir linked through a symlinked dir", CheckTrusted(sd2), open, "can be written by others")

	// Settings files of a state dir of one's own, linked into that dir.
	own := mkdir(filepath.Join(base, "own", ".zwarm"), 0o700)
	cfg := link(filepath.Join(open, "config.toml"), filepath.Join(own, File))
	untrusted(t, "config.toml linked into a world-writable dir", CheckTrusted(own), open, "can be written by others")
	if _, err := Load(own); err == nil {
		t.Error("config.toml is read through a symlink into a world-writable dir")
	}
	os.Remove(cfg)
	// codex.toml -> ../cfglink/codex.toml, cfglink -> open/cfg: the link
	// in a trusted dir does not make what it points to trusted.
	link(filepath.Join(open, "cfg"), filepath.Join(base, "own", "cfglink"))
	link("../cfglink/codex.toml", filepath.Join(own, "codex.toml"))
	untrusted(t, "codex.toml linked through a symlinked dir", CheckTrusted(own), open, "can be written by others")

	// Once nothing on the way may be written by others, the symlinks are
	// fine: the state dir's own may be a symlink, and so may its settings.
	os.Chmod(open, 0o700)
	for _, d := range []string{sd, sd2, own} {
		if err := CheckTrusted(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	// The file read is judged, not the symlink naming it.
	target := filepath.Join(open, "cfg", "codex.toml")
	os.Chmod(target, 0o620)
	untrusted(t, "a group-writable file a codex.toml links to", CheckTrusted(own), target, "can be written by others")
	os.Chmod(target, 0o600)
}

// [trust] dirs entries name directories: a relative one names none, and is
// an error naming the file and the entry; one that is a symlink trusts
// what it points to.
func TestTrustEntriesAreAbsoluteAndResolved(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "r1", ".zwarm")
	os.MkdirAll(dir, 0o700)
	os.Chmod(dir, 0o770)
	for _, entry := range []string{".zwarm", "r1/.zwarm", "~alex/x"} {
		path := userConfig(t, "[trust]\ndirs = [\""+entry+"\"]\n")
		var ce *Error
		err := CheckTrusted(dir)
		if !errors.As(err, &ce) || ce.Path != path || !strings.Contains(err.Error(), "\""+entry+"\"") || !strings.Contains(err.Error(), "absolute path") {
			t.Errorf("relative entry %q: %v", entry, err)
		}
	}
	r1link := filepath.Join(base, "r1link")
	if err := os.Symlink(filepath.Join(base, "r1"), r1link); err != nil {
		t.Fatal(err)
	}
	for _, entry := range []string{r1link, r1link + "/.zwarm"} {
		userConfig(t, "[trust]\ndirs = [\""+entry+"\"]\n")
		if err := CheckTrusted(dir); err != nil {
			t.Errorf("trusted through the symlink %q: %v", entry, err)
		}
	}
	userConfig(t, "[trust]\ndirs = [\""+filepath.Join(base, "r1link-not")+"\"]\n")
	if CheckTrusted(dir) == nil {
		t.Error("another directory's entry trusts it")
	}
}
