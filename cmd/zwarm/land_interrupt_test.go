package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// A Ctrl+C while land writes the checkout (here, git waits on a file's
// smudge filter, as for a large file or git LFS) does not stop git
// midway: that left your files half written, said "nothing was changed",
// and refused the next land for the half-written file in the way. The
// checkout is finished, the landing recorded, and land says so (exit 0).
func TestLandInterruptedWhileItWritesYourFilesFinishesThem(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README": "hi\n"})
	smudging := filepath.Join(t.TempDir(), "smudging")
	w.git(w.Work, "config", "filter.slow.smudge", "touch "+smudging+"; sleep 2; cat")
	w.setScript(agentDoes(`printf 'slow.txt filter=slow\n' > .gitattributes; printf 'first\n' > a.txt; printf 'whole\n' > slow.txt`))
	id := w.spawn("write three files")
	w.ok("wait", id)
	cmd := exec.Command(bins.zwarm, "land", id)
	cmd.Dir, cmd.Env = w.Work, w.env()
	// As a terminal runs a command: in a process group of its own, which
	// Ctrl+C signals whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sessionstest.Eventually(t, "git to write slow.txt", func() bool { _, err := os.Stat(smudging); return err == nil })
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	if code := exitOf(t, cmd, &out); code != 0 || !strings.Contains(out.String(), "landed") || strings.Contains(out.String(), "warning") {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	if st := w.git(w.Work, "status", "--porcelain"); st != "" {
		t.Fatalf("the checkout is not whole:\n%s\n%s", st, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(w.Work, "slow.txt")); err != nil || string(b) != "whole\n" {
		t.Fatalf("slow.txt: %q, %v", b, err)
	}
	if s := w.record(id); s.Workspace == nil || s.Workspace.Landed == nil {
		t.Fatal("the landing is not recorded")
	}
}
