package watchers

import (
	"fmt"
	"github.com/zwarm/zwarm/sessions/record"
	"strings"
	"testing"
)

func changes(paths ...string) []record.FileChange {
	out := make([]record.FileChange, len(paths))
	for i, p := range paths {
		out[i] = record.FileChange{Path: p, Kind: "update"}
	}
	return out
}

func TestQualityTooManyFiles(t *testing.T) {
	cfg := DefaultConfig().Quality
	cfg.MaxFiles = 4
	w := newQuality(cfg)
	h := newHistory("refactor")
	h.worker("w1")
	h.v.Changes["w1"] = changes("a_test.go", "b_test.go", "c.md")
	ask(t, w, h, Continue)
	// The same file changed by two workers counts once.
	h.v.Changes["w2"] = changes("c.md", "d.md", "e.md")
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "changed 5 files (the watcher's max_files is 4)") {
		t.Errorf("message %q", v.Message)
	}
	h.v.Changes["w2"] = changes("c.md", "d.md", "e.md", "f.md")
	ask(t, w, h, Continue) // not at every new file
	for i := 0; i < 4; i++ {
		h.v.Changes["w2"] = append(h.v.Changes["w2"], changes(fmt.Sprintf("g%d.md", i))...)
	}
	ask(t, w, h, Nudge) // doubled
}

func TestQualityCodeWithoutTests(t *testing.T) {
	w := newQuality(DefaultConfig().Quality)
	h := newHistory("add a parser")
	w1 := h.worker("w1")
	h.v.Changes["w1"] = changes("parser/parser.go", "README.md")
	ask(t, w, h, Continue) // still running: it may write the tests yet
	h.end(w1, record.StatusCompleted)
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "changed code (parser/parser.go) and no test") {
		t.Errorf("message %q", v.Message)
	}
	ask(t, w, h, Continue)
}

func TestQualityQuietWhenAnotherWorkerWroteTests(t *testing.T) {
	w := newQuality(DefaultConfig().Quality)
	h := newHistory("add a parser")
	w1, w2 := h.worker("w1"), h.worker("w2")
	h.v.Changes["w1"] = changes("parser/parser.go")
	h.v.Changes["w2"] = changes("parser/tests/cases.py")
	h.end(w1, record.StatusCompleted)
	h.end(w2, record.StatusCompleted)
	ask(t, w, h, Continue)
	for _, p := range []string{"src/__tests__/x.js", "test_x.py", "x.spec.ts", "XTest.java", "pkg/x_test.go"} {
		if !isTest(p, TestPatterns) {
			t.Errorf("%s is a test", p)
		}
	}
	for _, p := range []string{"latest_version.go", "contest.py", "attestation/x.go"} {
		if isTest(p, TestPatterns) {
			t.Errorf("%s is not a test", p)
		}
	}
}
