package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/tui/diffview"
)

// worktrees is a state dir with a repository and workers in it: one with
// a small change of two files, one that added a file far longer than the
// view keeps, and a session that worked in place.
func worktrees(t *testing.T) (f *fixture, small, huge, inPlace string) {
	f = newFixture(t)
	repo := f.repo(map[string]string{"limiter.go": "package limiter\n\nconst Rate = 10\n", "README": "limits\n"})
	small = f.worker(1, record.StatusCompleted, "raise the rate and document it", repo, map[string]string{
		"limiter.go":   "package limiter\n\n// Rate is per second.\nconst Rate = 20\n",
		"docs/rate.md": "# Rate\n\n20 per second.\n",
	})
	huge = f.worker(2, record.StatusCompleted, "vendor the world", repo, map[string]string{"vendor/big.txt": numbered(diffview.MaxLines + 2000)})
	inPlace = f.add(3, record.StatusCompleted, "edit in my checkout", 3*time.Hour)
	return f, small, huge, inPlace
}

// selectRow moves the list's cursor to session id.
func selectRow(t *testing.T, m Model, id string) Model {
	t.Helper()
	m = press(t, m, "g")
	for i := 0; selected(m) != record.ShortID(id); i++ {
		if i > 20 {
			t.Fatalf("no row %s in:\n%s", record.ShortID(id), m.View())
		}
		m = press(t, m, "j")
	}
	return m
}

// openDiffOf selects session id, presses v and waits for its diff.
func openDiffOf(t *testing.T, m Model, id string) Model {
	t.Helper()
	m = press(t, selectRow(t, m, id), "v")
	return settle(t, m, func(m Model) bool { return m.diff.Loaded() })
}

// The diff view at fixed sizes: a small diff whole, the end of a huge one
// where the view cut it, and a session that worked in place.
func TestDiffViewGoldens(t *testing.T) {
	f, small, huge, inPlace := worktrees(t)
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("diff_%dx%d", size[0], size[1]), func(t *testing.T) {
			m := openDiffOf(t, f.newModel(size[0], size[1]), small)
			v := m.diff.View()
			order(t, v, "▶ diff 3f2a0001 · +5 -1 in 2 files · raise the rate and document it [all]",
				"diff --git a/docs/rate.md b/docs/rate.md", "+20 per second.", "diff --git a/limiter.go b/limiter.go",
				"-const Rate = 10", "+// Rate is per second.", "+const Rate = 20")
			golden.RequireEqual(t, []byte(v))
		})
	}
	t.Run("cut_80x24", func(t *testing.T) {
		m := press(t, openDiffOf(t, f.newModel(80, 24), huge), "G")
		v := m.diff.View()
		order(t, v, "diff 3f2a0002 · +12000 -0 in 1 file · the first 10000 lines shown", "[100%]",
			"+line 9994", "✂ cut here: the view keeps the first 10000 lines of the diff; zwarm diff", "3f2a0002 shows all of it")
		if strings.Contains(v, "+line 9995") {
			t.Fatalf("more than %d lines kept:\n%s", diffview.MaxLines, v)
		}
		golden.RequireEqual(t, []byte(v))
	})
	t.Run("inplace_80x24", func(t *testing.T) {
		m := openDiffOf(t, f.newModel(80, 24), inPlace)
		v := m.diff.View()
		order(t, v, "diff 3f2a0003 · in place", "session 3f2a0003 worked in place, in /w: it has no branch of its own")
		golden.RequireEqual(t, []byte(v))
	})
}

// v opens the view in place of the list, the scrolling keys move it, and
// esc and q close it back to the list without quitting.
func TestDiffViewScrollsAndCloses(t *testing.T) {
	f, _, huge, _ := worktrees(t)
	m := openDiffOf(t, f.newModel(80, 24), huge)
	if v := m.View(); strings.Contains(v, "▶ ID") || !strings.Contains(v, "[0%]") || !strings.Contains(v, "↑/↓ scroll") {
		t.Fatalf("the view is not open at its top:\n%s", v)
	}
	top := m.diff.View()
	m = press(t, m, "j", "j")
	if after := m.diff.View(); after == top || !strings.Contains(after, "+line 1\n") && !strings.Contains(after, "+line 2") {
		t.Fatalf("j did not scroll:\n%s", after)
	}
	m = press(t, m, "ctrl+d")
	if strings.Contains(m.diff.View(), "+++ b/vendor/big.txt") {
		t.Fatalf("page down did not move:\n%s", m.diff.View())
	}
	m = press(t, m, "g")
	if m.diff.View() != top {
		t.Fatalf("g is not the top again:\n%s", m.diff.View())
	}
	m = press(t, m, "?")
	if v := m.View(); !strings.Contains(v, "keys  (any key closes)") || !strings.Contains(v, "v     view the diff") {
		t.Fatalf("? in the diff view:\n%s", v)
	}
	m = press(t, m, "j")
	if !m.diff.Active() || m.diff.View() != top {
		t.Fatalf("the key that closed the help did more:\n%s", m.View())
	}
	m = press(t, m, "esc")
	if m.diff.Active() || !strings.Contains(m.View(), "▶ ID") {
		t.Fatalf("esc did not close the view:\n%s", m.View())
	}
	m = press(t, m, "v")
	m = settle(t, m, func(m Model) bool { return m.diff.Loaded() })
	next, cmd := m.Update(keyMsg("q"))
	if cmd != nil {
		if _, quit := cmd().(tea.QuitMsg); quit {
			t.Fatal("q in the diff view quit")
		}
	}
	if m = next.(Model); m.diff.Active() {
		t.Fatal("q did not close the view")
	}
	// Ctrl+C still quits from the view.
	m = press(t, m, "v")
	if _, cmd = m.Update(keyMsg("ctrl+c")); cmd == nil {
		t.Fatal("ctrl+c in the diff view did nothing")
	} else if _, quit := cmd().(tea.QuitMsg); !quit {
		t.Fatal("ctrl+c in the diff view did not quit")
	}
}

// The diff is read off the UI goroutine: v returns at once with the view
// loading, and the diff arrives as a message.
func TestDiffLoadsOffTheUIGoroutine(t *testing.T) {
	f, small, _, _ := worktrees(t)
	m := selectRow(t, f.newModel(80, 24), small)
	next, cmd := m.Update(keyMsg("v"))
	m = next.(Model)
	if cmd == nil || m.diff.Loaded() || !strings.Contains(m.diff.View(), "loading the diff of 3f2a0001…") {
		t.Fatalf("v did not leave the reading to a command:\n%s", m.diff.View())
	}
	msg, ok := cmd().(diffview.LoadedMsg)
	if !ok || msg.Err != nil || len(msg.Lines) == 0 {
		t.Fatalf("the command returned %#v", msg)
	}
	m = send(m, msg)
	if !strings.Contains(m.diff.View(), "+const Rate = 20") {
		t.Fatalf("the loaded diff is not shown:\n%s", m.diff.View())
	}
	// A load an earlier opening asked for is not shown over a later one's.
	m = press(t, m, "esc", "j", "v")
	m = send(m, msg)
	if strings.Contains(m.diff.View(), "+const Rate = 20") {
		t.Fatalf("a stale load was shown:\n%s", m.diff.View())
	}
}

// What a worker wrote cannot reach the terminal raw: without colour every
// control character is escaped; with git's colours, only their SGR
// sequences remain.
func TestDiffTextIsSafe(t *testing.T) {
	f := newFixture(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	id := f.worker(1, record.StatusCompleted, "hostile", repo, map[string]string{
		"a.txt": "a\x1b[2J\x1b]0;pwned\x07\u202e\x9b1m\tb\r\n",
	})
	for _, colour := range []bool{false, true} {
		msg := diffview.Load(context.Background(), f.m, id, 0, colour)().(diffview.LoadedMsg)
		if msg.Err != nil {
			t.Fatal(msg.Err)
		}
		text := strings.Join(msg.Lines, "\n")
		if !strings.Contains(text, `a\x1b[2J\x1b]0;pwned\x07\u202e`) {
			t.Errorf("colour %v: the change is not shown escaped:\n%q", colour, text)
		}
		for i := 0; i < len(text); i++ {
			c := text[i]
			switch {
			case c == 0x1b && colour:
				j := i + 2
				for j < len(text) && (text[j] >= '0' && text[j] <= '9' || text[j] == ';') {
					j++
				}
				if i+1 >= len(text) || text[i+1] != '[' || j >= len(text) || text[j] != 'm' {
					t.Fatalf("colour: an escape that is no SGR at %d: %q", i, text[i:min(len(text), i+12)])
				}
			case c < 0x20 && c != '\n', c == 0x7f:
				t.Fatalf("colour %v: control %#x at %d in %q", colour, c, i, text)
			}
		}
		for _, r := range text {
			if r != '\n' && r != 0x1b && unicode.IsControl(r) || r == '\u202e' {
				t.Fatalf("colour %v: %U in %q", colour, r, text)
			}
		}
		if colour != strings.Contains(text, "\x1b[32m+") {
			t.Errorf("colour %v: git's colours %v:\n%q", colour, !colour, text)
		}
	}
}

// The screen with the diff open stays in bounds at any size.
func TestDiffViewResizes(t *testing.T) {
	f, _, huge, _ := worktrees(t)
	m := openDiffOf(t, f.newModel(120, 40), huge)
	for _, size := range [][2]int{{80, 24}, {60, 15}, {200, 50}, {40, 10}} {
		m = send(m, sizeMsg(size[0], size[1]))
		lines := strings.Split(m.View(), "\n")
		if len(lines) != size[1] {
			t.Errorf("%v: %d lines", size, len(lines))
		}
		for i, l := range lines {
			if w := lipgloss.Width(l); w > size[0] {
				t.Errorf("%v: line %d is %d wide: %q", size, i, w, l)
			}
		}
		if !strings.Contains(lines[1], "diff 3f2a0002") {
			t.Errorf("%v: no title: %q", size, lines[1])
		}
	}
}

// Long lines are cut at the edge, and → and ← scroll to the rest.
func TestDiffScrollsSideways(t *testing.T) {
	f := newFixture(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	long := strings.Repeat("x", 100) + "THE END"
	id := f.worker(1, record.StatusCompleted, "long", repo, map[string]string{"a.txt": long + "\n"})
	m := openDiffOf(t, f.newModel(80, 24), id)
	if v := m.diff.View(); strings.Contains(v, "THE END") || !strings.Contains(v, "+"+strings.Repeat("x", 79)) {
		t.Fatalf("the long line is not cut at the edge:\n%s", v)
	}
	m = press(t, m, "right", "right", "right", "right")
	if v := m.diff.View(); !strings.Contains(v, "xxxTHE END") {
		t.Fatalf("→ did not scroll to the end:\n%s", v)
	}
	m = press(t, m, "left", "left", "left", "left")
	if v := m.diff.View(); !strings.Contains(v, "\n+xxx") {
		t.Fatalf("← did not scroll back:\n%s", v)
	}
}
