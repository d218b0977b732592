package sessions

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// StartDetached is the intermediate step of startSupervisor: it starts argv (the
// supervisor without --detach) in a new session with stdio detached from
// any terminal, stderr appended to the session's supervisor.log, writes the
// supervisor's ProcRef as JSON to out and returns.
func StartDetached(st *state.Store, id string, argv []string, out io.Writer) error {
	if err := validID(id); err != nil {
		return err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	logf, err := state.OpenAppend(st.Dir(), st.LogPath(id))
	if err != nil {
		return fmt.Errorf("detach %s: %w", id, err)
	}
	defer logf.Close()
	p, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Files: []*os.File{devnull, devnull, logf},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fmt.Errorf("detach %s: %w", id, err)
	}
	ref, err := proc.RefOf(p.Pid)
	if err != nil {
		return fmt.Errorf("detach %s: supervisor exited at once: %w", id, err)
	}
	ref.Role = record.RoleSupervisor
	p.Release()
	return writeJSONLine(out, ref)
}
