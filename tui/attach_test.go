package tui

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
	"github.com/zwarm/zwarm/tui/keys"
)

// attachCalls records what the dashboard asked to attach to.
type attachCalls []string

func (a *attachCalls) command(id string, interrupt bool) tea.ExecCommand {
	call := record.ShortID(id)
	if interrupt {
		call = "!" + call
	}
	*a = append(*a, call)
	return &fakeExec{}
}

// A on a settled session attaches at once; on a running turn it asks
// first, and a yes attaches stopping the turn; what cannot be attached
// now says why, and nothing is run.
func TestAttachKey(t *testing.T) {
	f := standard(t)
	f.add(6, record.StatusPending, "about to start", time.Second)
	m := f.newModel(120, 40)
	var calls attachCalls
	m.opt.Attach = calls.command

	m = press(t, selectRow(t, m, fixtureID(3)), "A")
	if len(calls) != 1 || calls[0] != "3f2a0003" || m.status != "attaching to 3f2a0003…" {
		t.Fatalf("A on a killed session: calls %v, status %q", calls, m.status)
	}

	m = press(t, selectRow(t, m, fixtureID(5)), "A")
	if len(calls) != 1 || m.statusLine() != "stop 3f2a0005's turn and attach to it? [y/N] " {
		t.Fatalf("A on a running turn: calls %v, status line %q", calls, m.statusLine())
	}
	m = press(t, m, "n")
	if len(calls) != 1 {
		t.Fatalf("n attached: %v", calls)
	}
	m = press(t, m, "A", "y")
	if len(calls) != 2 || calls[1] != "!3f2a0005" {
		t.Fatalf("y on the question: calls %v", calls)
	}

	m = press(t, selectRow(t, m, fixtureID(6)), "A")
	if len(calls) != 2 || !m.statusErr || m.status != "3f2a0006 is pending and cannot be attached now: it is starting" {
		t.Fatalf("A on a pending session: calls %v, status %q", calls, m.status)
	}

	m.opt.Attach = nil
	m = press(t, selectRow(t, m, fixtureID(1)), "A")
	if !m.statusErr || !strings.Contains(m.status, "this dashboard attaches to no worker") {
		t.Fatalf("A without an attach command: %q", m.status)
	}

	m = send(m, attachedMsg{id: fixtureID(1)})
	if m.statusErr || m.status != "back from 3f2a0001: zwarm show 3f2a0001 lists its attached spans, with what they committed" {
		t.Fatalf("after the attach: %q", m.status)
	}
	failed := exec.Command("sh", "-c", "exit 3").Run()
	m = send(m, attachedMsg{id: fixtureID(1), err: failed})
	if !m.statusErr || m.status != "zwarm attach 3f2a0001 exited 3" {
		t.Fatalf("after a failed attach: %q", m.status)
	}
}

// A on an orchestrator's run says what to attach to instead.
func TestAttachKeyOnARun(t *testing.T) {
	km := keys.Default()
	r := runRefusal(keyMsg("A"), &km, &runs.Record{ID: "9c1d2e3f-0000-4000-8000-000000000000", Status: runs.StatusRunning})
	if r == nil || !strings.Contains(r.Error(), "A on one of its workers attaches to that worker") {
		t.Fatalf("refusal %v", r)
	}
}

// fakeExec is an attach that exits with err.
type fakeExec struct {
	err    error
	ran    bool
	stderr io.Writer
}

func (f *fakeExec) Run() error            { f.ran = true; return f.err }
func (f *fakeExec) SetStdin(io.Reader)    {}
func (f *fakeExec) SetStdout(io.Writer)   {}
func (f *fakeExec) SetStderr(w io.Writer) { f.stderr = w }

// What a failed attach said stays until Enter: the dashboard's screen
// would hide it. One that ended well hands the terminal straight back.
func TestAHandedOverTerminalWaitsForEnterAfterAFailure(t *testing.T) {
	for _, c := range []struct {
		err    error
		prompt bool
	}{{nil, false}, {errors.New("exit status 1"), true}} {
		inner := &fakeExec{err: c.err}
		h := &handedOver{ExecCommand: inner}
		in := strings.NewReader("\n")
		var errOut bytes.Buffer
		h.SetStdin(in)
		h.SetStderr(&errOut)
		if err := h.Run(); err != c.err || !inner.ran {
			t.Fatalf("run: %v (ran %v)", err, inner.ran)
		}
		asked := strings.Contains(errOut.String(), "press Enter to go back to the dashboard")
		if asked != c.prompt {
			t.Errorf("err %v: asked %v (%q)", c.err, asked, errOut.String())
		}
	}
}

// A delete refused for work never landed says what the dashboard can do
// about it (v, L), not a flag it has no key for.
func TestADeleteRefusedForUnlandedWorkSaysWhatToDoHere(t *testing.T) {
	f, small, _, _ := worktrees(t)
	// The fixture's worktree, as zwarm would have made it for this state dir.
	wt := f.sessionOf(small).Workspace.Path
	if err := os.WriteFile(workspace.OwnerFile(wt), []byte(f.dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := press(t, selectRow(t, f.newModel(120, 40), small), "d", "y")
	m = settle(t, m, func(m Model) bool { return m.statusErr })
	if !strings.HasPrefix(m.status, "3f2a0001 is not deleted: ") || !strings.Contains(m.status, "v shows it, L lands it, zwarm rm --force 3f2a0001 drops it") ||
		strings.Contains(m.status, "pass --force") {
		t.Fatalf("status %q", m.status)
	}
}
