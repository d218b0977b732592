//go:build stress

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"golang.org/x/sys/unix"
)

func stressN(def int) int {
	if v, err := strconv.Atoi(os.Getenv("ZWARM_STRESS_N")); err == nil && v > 0 {
		return v
	}
	return def
}

// Ctrl+C (SIGINT to the command's process group, as a terminal sends it)
// at a random moment of `zwarm inject`, while the session's lock is held
// for a random while or free. Right: exit 130 with the record as it was
// (completed, nothing queued), or exit 0 saying it resumed, and the
// follow-up then becomes a completed turn.
func TestStressInjectCtrlC(t *testing.T) {
	n := stressN(100)
	w := newWorld(t)
	id := w.spawn("first")
	w.zwarm("wait", id)
	lockPath := filepath.Join(w.State, "sessions", id, ".lock")
	inboxDir := filepath.Join(w.State, "sessions", id, "inbox")
	var wrong []string
	delivered, interrupted := 0, 0
	for i := range n {
		bad := func(format string, a ...any) {
			wrong = append(wrong, fmt.Sprintf("try %d: ", i)+fmt.Sprintf(format, a...))
		}
		before := w.record(id)
		inboxBefore, _ := os.ReadDir(inboxDir)
		var wg sync.WaitGroup
		if rand.IntN(2) == 0 {
			f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			hold := time.Duration(rand.IntN(150000)) * time.Microsecond
			wg.Add(1)
			go func() { defer wg.Done(); time.Sleep(hold); f.Close() }()
		}
		cmd := exec.Command(bins.zwarm, "inject", id, fmt.Sprintf("follow-up %d", i))
		cmd.Dir, cmd.Env = w.Work, w.env()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(150000)) * time.Microsecond)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		err := cmd.Wait()
		wg.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
				code = 130 // interrupted before it could handle signals: the shell says 130 too
			}
		}
		switch code {
		case 0:
			delivered++
			if !strings.Contains(stdout.String(), "resumed as turn") {
				bad("exit 0 without saying it resumed: %q", stdout.String())
			}
			w.zwarm("wait", id)
			s := w.record(id)
			last := s.Turns[len(s.Turns)-1]
			if s.Status() != record.StatusCompleted || len(s.Turns) != len(before.Turns)+1 || last.Prompt != fmt.Sprintf("follow-up %d", i) || last.Status() != record.StatusCompleted {
				bad("after a delivered follow-up the session is %s (%s) with %d turns", s.Status(), s.Error, len(s.Turns))
			}
		case 130:
			interrupted++
			s := w.record(id)
			inbox, _ := os.ReadDir(inboxDir)
			if s.Status() != before.Status() || s.Owner != nil || s.NextInboxSeq != before.NextInboxSeq || s.PendingInjects != 0 || len(inbox) != len(inboxBefore) {
				bad("the interrupted follow-up changed the session: %s (%s), seq %d→%d, %d pending, inbox %d→%d",
					s.Status(), s.Error, before.NextInboxSeq, s.NextInboxSeq, s.PendingInjects, len(inboxBefore), len(inbox))
				w.zwarm("wait", id)
			}
		default:
			bad("exit %d: %s", code, stderr.String())
			w.zwarm("wait", id)
		}
	}
	for _, m := range wrong {
		t.Error(m)
	}
	t.Logf("inject interrupted by Ctrl+C: %d tries, %d wrong outcomes (%d delivered whole, %d interrupted with nothing changed)",
		n, len(wrong), delivered, interrupted)
}
