package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
)

// The command-line reference in docs/cli/ is generated from the commands
// themselves, so it can never drift from them; this test fails when it has.
var gendocs = flag.Bool("gendocs", false, "rewrite the command-line reference in docs/cli/")

const (
	cliDocsDir = "../../docs/cli"
	cliDocsCmd = "go test ./cmd/zwarm -run TestCLIReference -gendocs"
)

// writeCLIDocs writes one Markdown page per visible command into dir.
func writeCLIDocs(dir string) error {
	root := newRootCmd(&factory{io: &cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}})
	// What cobra adds only when a command line runs: the version flag and
	// the completion command belong in the reference too.
	root.InitDefaultVersionFlag()
	root.InitDefaultCompletionCmd()
	var stamp func(*cobra.Command)
	stamp = func(c *cobra.Command) {
		c.DisableAutoGenTag = true // no date: the output depends on the commands alone
		for _, sub := range c.Commands() {
			stamp(sub)
		}
	}
	stamp(root)
	return doc.GenMarkdownTree(root, dir)
}

func TestCLIReference(t *testing.T) {
	if *gendocs {
		old, _ := filepath.Glob(filepath.Join(cliDocsDir, "*.md"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(cliDocsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeCLIDocs(cliDocsDir); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	if err := writeCLIDocs(tmp); err != nil {
		t.Fatal(err)
	}
	want := readDocs(t, tmp)
	got := readDocs(t, cliDocsDir)
	stale := false
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("docs/cli/%s is missing", name)
			stale = true
		case !bytes.Equal(g, w):
			t.Errorf("docs/cli/%s is not what the commands say", name)
			stale = true
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/cli/%s documents no command", name)
			stale = true
		}
	}
	if stale {
		t.Errorf("the command-line reference is out of date; regenerate it with:\n\t%s", cliDocsCmd)
	}
}

// readDocs reads the Markdown pages of dir by name.
func readDocs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// TestDocsLinks checks every link of the README and of docs/ that stays in
// the repository: the file it names exists, and so does the heading its
// #anchor names (as GitHub makes anchors from headings).
func TestDocsLinks(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	cli, _ := filepath.Glob(cliDocsDir + "/*.md")
	files = append(append([]string{"../../README.md"}, files...), cli...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		path = filepath.Clean(path)
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := map[string]bool{}
		seen := map[string]int{}
		for _, line := range proseLines(string(b)) {
			h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
			if !strings.HasPrefix(line, "#") || !ok {
				continue
			}
			slug := headingSlug(h)
			if n := seen[slug]; n > 0 {
				a[fmt.Sprintf("%s-%d", slug, n)] = true
			} else {
				a[slug] = true
			}
			seen[slug]++
		}
		anchors[path] = a
		return a, nil
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(file, "../../")
		for _, line := range proseLines(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(stripCodeSpans(line), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: link to %s: no such file", name, target)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				a, err := anchorsOf(dest)
				if err != nil {
					t.Errorf("%s: link to %s: %v", name, target, err)
					continue
				}
				if !a[anchor] {
					t.Errorf("%s: link to %s: no such heading", name, target)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d links", checked)
	}
}

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	slugRemove = regexp.MustCompile(`[^\p{L}\p{M}\p{N}\p{Pc} -]`)
)

// proseLines are the lines of a Markdown text outside code: fenced blocks
// and indented blocks are left out.
func proseLines(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		out = append(out, line)
	}
	return out
}

func stripCodeSpans(line string) string { return codeSpan.ReplaceAllString(line, "") }

// headingSlug is the anchor GitHub gives a heading: lower case, punctuation
// dropped, spaces as dashes.
func headingSlug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	return strings.ReplaceAll(slugRemove.ReplaceAllString(h, ""), " ", "-")
}
