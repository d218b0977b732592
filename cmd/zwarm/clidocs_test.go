package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
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
	root := newRootCmd(&streams{in: strings.NewReader(""), out: io.Discard, errOut: io.Discard})
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
