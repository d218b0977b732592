package tools

import (
	"fmt"
	"strings"
	"testing"
)

// patchOf is a git patch adding each file with n lines.
func patchOf(files ...struct {
	name  string
	lines int
}) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", f.name, f.name, f.name, f.lines)
		for i := 0; i < f.lines; i++ {
			fmt.Fprintf(&b, "+line %d of %s\n", i, f.name)
		}
	}
	return b.String()
}

type pf = struct {
	name  string
	lines int
}

func bounded(patch string, limit, bound int) string {
	c := &capped{limit: limit}
	c.Write([]byte(patch))
	return boundPatch(c, bound, "git -C /wt diff abc -- PATH")
}

func TestBoundPatchKeepsWholeFilesAndNamesTheRest(t *testing.T) {
	t.Parallel()
	small := patchOf(pf{"a.go", 3}, pf{"b.go", 2})
	if got := bounded(small, diffCapture, 10000); got != small {
		t.Errorf("a patch within the bound changed:\n%s", got)
	}
	// The big file in the middle is left out, the small ones after it kept.
	p := patchOf(pf{"a.go", 3}, pf{"gen/big.go", 2000}, pf{"c.go", 4})
	got := bounded(p, diffCapture, 2000)
	mustHave(t, "the bounded patch", got, "+line 2 of a.go", "+line 3 of c.go",
		"… 1 file left out to keep this answer under 30000 bytes: gen/big.go (+2000 -0).",
		"stat=true lists every file changed; read one file's whole change with: git -C /wt diff abc -- PATH")
	if strings.Contains(got, "of gen/big.go") {
		t.Error("the left-out file is shown")
	}
	// A first file too big for the bound alone: its beginning, on whole lines.
	got = bounded(patchOf(pf{"huge.go", 5000}), diffCapture, 3000)
	mustHave(t, "a cut file", got, "+line 0 of huge.go", "the diff of huge.go is cut above (")
	if i := strings.Index(got, "\n… "); i < 0 || !strings.HasSuffix(got[:i], "huge.go\n") || len(got) > 3000 {
		t.Errorf("the cut is not on a line boundary, or too long (%d bytes):\n%s", len(got), got[max(0, len(got)-600):])
	}
	// git's output beyond what is read: the file cut by the capture is not
	// shown as if whole, and the answer says files may be missing.
	p = patchOf(pf{"a.go", 3}, pf{"b.go", 400}, pf{"c.go", 400})
	got = bounded(p, len(patchOf(pf{"a.go", 3}))+200, 20000)
	mustHave(t, "an overflowing diff", got, "+line 2 of a.go", "1 file left out", ": b.go; git's diff is", "only its first")
	if strings.Contains(got, "line 100 of b.go") || strings.Contains(got, "c.go") {
		t.Errorf("the partial file was shown, or an unread one named:\n%s", got)
	}
}

func TestParseFileNames(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]pf{
		"diff --git a/x y/a b/c.go b/x y/a b/c.go\n--- a/x y/a b/c.go\n+++ b/x y/a b/c.go\n@@ -1 +1 @@\n-old\n+new\n+++ more\n--- less\n": {"x y/a b/c.go", 0},
		"diff --git a/gone.go b/gone.go\ndeleted file mode 100644\n--- a/gone.go\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n":               {"gone.go", 0},
		"diff --git a/bin.png b/bin.png\nBinary files a/bin.png and b/bin.png differ\n":                                                   {"bin.png", 0},
	} {
		if f := parseFile(text); f.path != want.name {
			t.Errorf("path %q, want %q", f.path, want.name)
		}
	}
	f := parseFile("diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1,2 +1,2 @@\n-old\n+new\n+++ more\n--- less\n")
	if f.added != 2 || f.deleted != 2 {
		t.Errorf("counts +%d -%d, want +2 -2 (content lines that look like headers count)", f.added, f.deleted)
	}
}
