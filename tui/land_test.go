package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/zwarm/zwarm/sessions/record"
)

// landing starts a dashboard where `zwarm dash` would be started: in the
// repository's checkout, on main, whose branch a landing goes into.
func landing(t *testing.T, f *fixture, repo string, w, h int) Model {
	t.Helper()
	f.checkout = repo
	return f.newModel(w, h)
}

// askToLand selects session id, presses L and waits for the dry run's
// answer: the confirmation line, or a refusal in the status line.
func askToLand(t *testing.T, m Model, id string) Model {
	t.Helper()
	m = press(t, selectRow(t, m, id), "L")
	return settle(t, m, func(m Model) bool {
		return m.prompt.Active() || m.statusErr || !strings.HasPrefix(m.status, "checking")
	})
}

// The confirmation line shows what would land, where, from a dry run that
// changed nothing; here under the diff it was asked from.
func TestLandConfirmGolden(t *testing.T) {
	f, small, _, _ := worktrees(t)
	repo := filepath.Dir(f.sessionOf(small).Workspace.GitDir)
	head := runGit(t, repo, "rev-parse", "HEAD")
	m := openDiffOf(t, landing(t, f, repo, 80, 24), small)
	m = settle(t, press(t, m, "L"), func(m Model) bool { return m.prompt.Active() })
	if got := m.statusLine(); got != "land 3f2a0001 into main: +5 -1 in 2 files? [y/N] " {
		t.Fatalf("confirmation %q; screen:\n%s", got, m.View())
	}
	if runGit(t, repo, "rev-parse", "HEAD") != head {
		t.Fatal("the dry run moved main")
	}
	golden.RequireEqual(t, []byte(m.View()))
}

// y lands into main, off the UI goroutine: the status line says as what,
// main has the change, and the row says landed.
func TestLandLandsOnYes(t *testing.T) {
	f, small, _, _ := worktrees(t)
	repo := filepath.Dir(f.sessionOf(small).Workspace.GitDir)
	m := askToLand(t, landing(t, f, repo, 120, 40), small)
	m = press(t, m, "y")
	m = settle(t, m, func(m Model) bool { return strings.HasPrefix(m.status, "landed ") })
	commit := runGit(t, repo, "rev-parse", "HEAD")
	if want := "landed 3f2a0001 into main as " + commit[:8] + ": +5 -1 in 2 files"; m.status != want || m.statusErr {
		t.Fatalf("status %q, want %q", m.status, want)
	}
	if got := runGit(t, repo, "log", "-1", "--format=%s"); got != "raise the rate and document it" {
		t.Errorf("main's commit %q", got)
	}
	if body, _ := os.ReadFile(filepath.Join(repo, "limiter.go")); !strings.Contains(string(body), "Rate = 20") {
		t.Errorf("the checkout was not updated: %q", body)
	}
	settle(t, m, func(m Model) bool {
		return strings.Contains(m.list.View(), "landed") && strings.Contains(m.list.View(), "raise the rate")
	})
}

// What cannot land is refused with Land's own words, and nothing asks.
func TestLandRefusals(t *testing.T) {
	f, small, _, inPlace := worktrees(t)
	repo := filepath.Dir(f.sessionOf(small).Workspace.GitDir)
	running := f.worker(4, record.StatusRunning, "still at it", repo, map[string]string{"wip.go": "package wip\n"})
	m := landing(t, f, repo, 120, 40)
	head := runGit(t, repo, "rev-parse", "HEAD")
	for _, c := range []struct{ id, want string }{
		{running, "land 3f2a0004: still running: wait or kill it first"},
		{inPlace, "session 3f2a0003 worked in place, in /w: it has no branch of its own"},
	} {
		m = askToLand(t, m, c.id)
		if m.prompt.Active() || !m.statusErr || !strings.HasPrefix(m.status, c.want) {
			t.Errorf("L on %s: status %q (error %v), prompt open %v", record.ShortID(c.id), m.status, m.statusErr, m.prompt.Active())
		}
	}
	// A conflict with what main gained meanwhile.
	writeFiles(t, repo, map[string]string{"limiter.go": "package limiter\n\nconst Rate = 15\n"})
	runGit(t, repo, "commit", "-q", "-am", "rate 15")
	head = runGit(t, repo, "rev-parse", "HEAD")
	m = askToLand(t, m, small)
	if m.prompt.Active() || !strings.Contains(m.status, "land 3f2a0001: it conflicts with main in limiter.go; nothing was changed") {
		t.Errorf("conflict: status %q", m.status)
	}
	if runGit(t, repo, "rev-parse", "HEAD") != head {
		t.Fatal("a refused landing moved main")
	}
}

// n at the confirmation lands nothing.
func TestLandCancelled(t *testing.T) {
	f, small, _, _ := worktrees(t)
	repo := filepath.Dir(f.sessionOf(small).Workspace.GitDir)
	head := runGit(t, repo, "rev-parse", "HEAD")
	m := press(t, askToLand(t, landing(t, f, repo, 80, 24), small), "n")
	if m.status != "cancelled" || m.prompt.Active() || runGit(t, repo, "rev-parse", "HEAD") != head {
		t.Fatalf("after n: status %q, main %s", m.status, runGit(t, repo, "rev-parse", "HEAD"))
	}
}

// A run has no change of its own: v and L on its row say where to look.
func TestRunRowHasNoDiff(t *testing.T) {
	m := orchestrated(t).newModel(120, 40)
	for k, want := range map[string]string{
		"v": "run 7c1e0000 changes nothing itself: v on one of its workers",
		"L": "run 7c1e0000 changes nothing itself: L on one of its workers",
	} {
		m = press(t, m, "g", k)
		if m.diff.Active() || m.prompt.Active() || !strings.HasPrefix(m.status, want) {
			t.Errorf("%s on a run: status %q", k, m.status)
		}
	}
}

// sessionOf reads a session's record as the dashboard would get it.
func (f *fixture) sessionOf(id string) *record.Session {
	f.t.Helper()
	s, err := f.m.Get(f.ctx(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}
