package tools

import (
	"fmt"
	"regexp"
	"strconv"
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
	c := &pagedPatch{capped: capped{limit: limit}}
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
	// shown as if whole; the next page starts at it, and every file after
	// it is counted.
	p = patchOf(pf{"a.go", 3}, pf{"b.go", 400}, pf{"c.go", 400})
	got = bounded(p, len(patchOf(pf{"a.go", 3}))+200, 20000)
	mustHave(t, "an overflowing diff", got, "+line 2 of a.go", "2 files more after these: call again with offset=1 for them.")
	if strings.Contains(got, "line 100 of b.go") || strings.Contains(got, "c.go") {
		t.Errorf("the partial file was shown, or an unread one named:\n%s", got)
	}
}

// A patch larger than what is read is paged from each page's own first
// file: every file is reachable, and counted (files past the first
// MiB were out of reach, and an offset among them said to be past the
// end).
func TestPagesReachEveryFileOfAPatchLargerThanWhatIsRead(t *testing.T) {
	t.Parallel()
	var files []pf
	for i := 0; i < 400; i++ {
		files = append(files, pf{fmt.Sprintf("f%03d.go", i), 100}) // 400 files of 2.5 kB: 1 MB
	}
	p := patchOf(files...)
	const limit = 200000 // a fifth of it
	for _, offset := range []int{0, 300, 399} {
		c := &pagedPatch{skip: offset, capped: capped{limit: limit}}
		// In odd chunks, as a pipe delivers it.
		for rest := p; len(rest) > 0; {
			n := min(len(rest), 7+offset%13)
			c.Write([]byte(rest[:n]))
			rest = rest[n:]
		}
		if c.files != 400 {
			t.Fatalf("offset %d: %d files counted, want 400", offset, c.files)
		}
		got := boundPatch(c, 30000, "git diff -- PATH")
		if first := fmt.Sprintf("+line 0 of f%03d.go", offset); !strings.Contains(got, first) {
			t.Errorf("offset %d: the page lacks its first file (%q):\n%.300s", offset, first, got)
		}
	}
	c := &pagedPatch{skip: 400, capped: capped{limit: limit}}
	c.Write([]byte(p))
	if got := boundPatch(c, 30000, "git diff -- PATH"); got != "offset 400 is past the last file: the change has 400 files." {
		t.Errorf("offset 400: %q", got)
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

// Pages of a patch: each answer within its bound, notes included; the
// offset each names shows the next files; together they show every file
// once, but one too big for any answer, which each names.
func TestBoundPatchPagesThroughEveryFile(t *testing.T) {
	t.Parallel()
	var files []pf
	for i := 0; i < 120; i++ {
		files = append(files, pf{fmt.Sprintf("f%03d.go", i), 20})
	}
	files[7].lines = 5000 // too big for any answer
	p := patchOf(files...)
	seen := map[string]int{}
	offset, pages := 0, 0
	for {
		c := &pagedPatch{skip: offset, capped: capped{limit: diffCapture}}
		c.Write([]byte(p))
		got := boundPatch(c, 8000, "git diff -- PATH")
		if len(got) > 8000 {
			t.Fatalf("page %d is %d bytes, over its bound", pages, len(got))
		}
		shown, _, _ := strings.Cut(got, "\n… ")
		for _, f := range splitPatch(shown) {
			seen[f.path]++
		}
		pages++
		m := regexp.MustCompile(`offset=(\d+)`).FindStringSubmatch(got)
		if m == nil {
			break
		}
		next, _ := strconv.Atoi(m[1])
		if next <= offset || pages > 100 {
			t.Fatalf("page %d names offset %d after %d", pages, next, offset)
		}
		offset = next
	}
	for _, f := range files {
		want := 1
		if f.name == "f007.go" {
			want = 0
		}
		if seen[f.name] != want {
			t.Errorf("%s shown %d times over %d pages, want %d", f.name, seen[f.name], pages, want)
		}
	}
	if pages < 3 {
		t.Errorf("%d pages for a patch many times the bound", pages)
	}
}

// Pages of a diffstat: every file's line once, git's summary line on each.
func TestPageStatPagesThroughEveryFile(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&b, " src/generated/file%03d.go | 1 +\n", i)
	}
	b.WriteString(" 600 files changed, 600 insertions(+)\n")
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&b, " create mode 100644 src/generated/file%03d.go\n", i)
	}
	seen := map[string]int{}
	offset := 0
	for pages := 1; ; pages++ {
		c := &capped{limit: diffCapture}
		c.Write([]byte(b.String()))
		got := pageStat(c, offset, diffStatBytes)
		if len(got) > diffStatBytes || !strings.Contains(got, "600 files changed, 600 insertions(+)") {
			t.Fatalf("page %d: %d bytes, or no summary line", pages, len(got))
		}
		for _, l := range strings.Split(got, "\n") {
			if strings.HasSuffix(l, " | 1 +") {
				seen[l]++
			}
		}
		m := regexp.MustCompile(`offset=(\d+)`).FindStringSubmatch(got)
		if m == nil {
			break
		}
		offset, _ = strconv.Atoi(m[1])
		if pages > 50 {
			t.Fatal("no end to the pages")
		}
	}
	if len(seen) != 600 {
		t.Fatalf("%d of 600 files shown over the pages", len(seen))
	}
	for l, n := range seen {
		if n != 1 {
			t.Fatalf("%q shown %d times", l, n)
		}
	}
}

// An offset at the end of a diffstat is past its last file (it was shown
// as "files 401-400 of 400").
func TestPageStatOffsetAtTheEnd(t *testing.T) {
	t.Parallel()
	c := &capped{limit: diffCapture}
	c.Write([]byte(" a.go | 1 +\n b.go | 1 +\n 2 files changed, 2 insertions(+)\n"))
	if got := pageStat(c, 2, diffStatBytes); got != "offset 2 is past the last file: the change has 2 files." {
		t.Errorf("offset 2 of 2 files: %q", got)
	}
}
