package watchers

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// quality reads the files the run's workers changed, from their
// file_change events: too many files, or code changed and no test.
type quality struct {
	cfg QualityConfig
	// files is the count of changed files last reported; code the count
	// of code files when the missing tests were reported.
	files, code int
	// kinds remembers what each path is: matching globs is the cost.
	kinds map[string]fileKind
}

type fileKind int

const (
	otherFile fileKind = iota
	codeFile
	testFile
)

func newQuality(cfg QualityConfig) *quality { return &quality{cfg: cfg, kinds: map[string]fileKind{}} }

func (q *quality) kind(p string) fileKind {
	k, ok := q.kinds[p]
	if !ok {
		switch {
		case isTest(p, q.cfg.TestPatterns):
			k = testFile
		case isSource(p, q.cfg.Extensions):
			k = codeFile
		}
		q.kinds[p] = k
	}
	return k
}

func (q *quality) Name() string { return "quality" }

func (q *quality) Check(_ context.Context, v *RunView) Verdict {
	files := map[string]bool{}
	var code []string
	tests := 0
	for _, changes := range v.Changes {
		for _, c := range changes {
			if files[c.Path] {
				continue
			}
			files[c.Path] = true
			switch q.kind(c.Path) {
			case testFile:
				tests++
			case codeFile:
				code = append(code, c.Path)
			}
		}
	}
	n := len(files)
	// Again each time the count doubles, not at every new file.
	if n > q.cfg.MaxFiles && (q.files == 0 || n >= 2*q.files) {
		q.files = n
		return Verdict{Action: Nudge, Message: fmt.Sprintf("The workers changed %d files (the watcher's max_files is %d). "+
			"Review the changes (git diff --stat) before going on, and split what remains into smaller tasks.", n, q.cfg.MaxFiles)}
	}
	// Judged once no worker runs: a test may come from another worker.
	if !q.cfg.RequireTests || tests > 0 || len(code) == 0 || len(code) <= q.code || v.running() > 0 {
		return Verdict{}
	}
	q.code = len(code)
	sort.Strings(code)
	shown := code
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(code)-5))
	}
	return Verdict{Action: Nudge, Message: fmt.Sprintf("The workers changed code (%s) and no test. Have a worker add or "+
		"update tests for it (converse or delegate), then run them.", strings.Join(shown, ", "))}
}
