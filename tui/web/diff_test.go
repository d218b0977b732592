package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplitDiff(t *testing.T) {
	patch := "diff --git a/a.go b/a.go\nindex 1..2 100644\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n" +
		"diff --git a/dir/b c.txt b/dir/b c.txt\nnew file mode 100644\n--- /dev/null\n+++ b/dir/b c.txt\n@@ -0,0 +1 @@\n+diff --git inside\n" +
		"diff --git a/gone.bin b/gone.bin\ndeleted file mode 100644\nBinary files a/gone.bin and /dev/null differ\n"
	files := splitDiff(patch)
	if len(files) != 3 || files[0].Path != "a.go" || files[1].Path != "dir/b c.txt" || files[2].Path != "gone.bin" {
		t.Fatalf("%+v", files)
	}
	whole := ""
	for _, f := range files {
		whole += f.Patch
	}
	if whole != patch {
		t.Fatalf("the parts do not make the whole:\n%q\nwant\n%q", whole, patch)
	}
}

// The files of a diff are named as they are, whatever git does to write
// their names in a patch (a tab after one with a space, C-quoting of one
// with a quote, a control character or non-ASCII), so ?file=PATH finds
// each: the names are checked against git's own list of them.
func TestSplitDiffNamesFilesAsGitDoes(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gone café.bin"), []byte("\x00bin"), 0o644)
	git("add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
	for _, name := range []string{"sp ace.txt", "café.txt", "q\"uote.txt", "tab\there.txt", "x b/y.txt", "plain.txt"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte("new\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "bin ary.bin"), []byte("\x00\x01"), 0o644)
	os.Remove(filepath.Join(dir, "gone.txt"))
	os.Remove(filepath.Join(dir, "gone café.bin"))
	git("add", "-A")
	var got []string
	for _, f := range splitDiff(git("diff", "--no-color", "--cached")) {
		got = append(got, f.Path)
	}
	want := strings.Split(strings.TrimSuffix(git("diff", "--cached", "--name-only", "-z"), "\x00"), "\x00")
	if !slices.Equal(got, want) {
		t.Fatalf("paths %q, want %q", got, want)
	}
}
