package tui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// The whole program on real worktrees: v shows a worker's diff, the keys
// scroll it to where it was cut, esc closes it; L asks with the diffstat,
// y lands it into main, and the outcome is said in the status line.
func TestProgramShowsADiffAndLandsIt(t *testing.T) {
	f, small, _, _ := worktrees(t)
	repo := filepath.Dir(f.sessionOf(small).Workspace.GitDir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := teatest.NewTestModel(t, New(ctx, Options{Sessions: f.m, StateDir: "/state", Dir: repo}),
		teatest.WithInitialTermSize(100, 30))
	waitFor := func(what ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			for _, w := range what {
				if !bytes.Contains(b, []byte(w)) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	keys := func(ks ...string) {
		for _, k := range ks {
			tm.Send(keyMsg(k))
		}
	}
	waitFor("CHANGES", "+5 -1 in 2 files", "+12000 -0 in 1 file", "in place")

	// The huge diff: scrolled down half a page, then to its end.
	keys("j", "v")
	waitFor("▶ diff 3f2a0002 · +12000 -0 in 1 file · the first 10000 lines shown", "+++ b/vendor/big.txt", "+line 20")
	keys("ctrl+d")
	waitFor("+line 30")
	keys("G")
	waitFor("+line 9994", "✂ cut here", "[100%]")
	keys("esc")
	waitFor("▶ ID", "raise the rate and")

	keys("k", "L")
	waitFor("land 3f2a0001 into main: +5 -1 in 2 files? [y/N]")
	keys("y")
	waitFor("landed 3f2a0001 into main as ")
	if got := runGit(t, repo, "log", "-1", "--format=%s"); got != "raise the rate and document it" {
		t.Errorf("main's last commit %q", got)
	}
	if body, _ := os.ReadFile(filepath.Join(repo, "docs", "rate.md")); !strings.Contains(string(body), "20 per second") {
		t.Errorf("the checkout has no docs/rate.md: %q", body)
	}

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if fm, ok := tm.FinalModel(t).(Model); ok {
		fm.Close()
	}
}
