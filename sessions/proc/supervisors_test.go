package proc

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// A supervisor's child caught between fork and exec has its parent's
// command line; it is not a second supervisor. Here the child is a shell
// that stays as its parent was (it runs two commands, so it does not exec
// the first), under a parent whose command line is a supervisor's.
func TestAChildOfASupervisorIsNotAnother(t *testing.T) {
	id := "3f2a9c1d-0000-4000-8000-00000000c41d"
	cmd := exec.Command("sh", "-c", `sh -c 'sleep 30; true' __supervise "$1" & sleep 30; true`, "__supervise", id)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var both int
		for _, p := range List() {
			if IsSupervisorOf(p.PID, id) {
				both++
			}
		}
		if both == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the parent and its child to run: %d of 2 seen", both)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := SupervisorsOf(id); !slices.Equal(got, []int{cmd.Process.Pid}) {
		t.Fatalf("SupervisorsOf = %v, want only the parent %d", got, cmd.Process.Pid)
	}
}
