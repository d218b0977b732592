package state

import (
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
)

// LiveSupervisors are the session's supervisors that run: the record's
// owner and any process running `zwarm __supervise ... ID`. A settled
// session has none to force.
func (st *Store) LiveSupervisors(id string) []*proc.Ref {
	var out []*proc.Ref
	seen := map[int]bool{}
	if s, err := st.Load(id); err == nil {
		if s.Settled() {
			return nil
		}
		if o := s.Owner; o != nil && o.Role == record.RoleSupervisor && o.Alive() {
			out = append(out, record.ClonePtr(o))
			seen[o.PID] = true
		}
	}
	for _, pid := range proc.SupervisorsOf(id) {
		if ref, err := proc.RefOf(pid); err == nil && !seen[pid] {
			out = append(out, ref)
			seen[pid] = true
		}
	}
	return out
}
