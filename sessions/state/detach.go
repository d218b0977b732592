package state

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
)

// StartDetached is the intermediate step of starting a supervisor: it
// starts argv (the supervisor without --detach) in a new session with
// stdio detached from any terminal, stderr appended to the session's
// supervisor.log, writes the supervisor's ProcRef as JSON to out and
// returns.
func (st *Store) StartDetached(id string, argv []string, out io.Writer) error {
	if err := store.ValidID(id); err != nil {
		return err
	}
	logf, err := OpenAppend(st.Dir(), st.LogPath(id))
	if err != nil {
		return fmt.Errorf("detach %s: %w", id, err)
	}
	defer logf.Close()
	ref, err := proc.StartDetached(argv, logf)
	if err != nil {
		return fmt.Errorf("detach %s: %w", id, err)
	}
	ref.Role = record.RoleSupervisor
	return json.NewEncoder(out).Encode(ref)
}
