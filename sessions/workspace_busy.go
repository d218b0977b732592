package sessions

import (
	"errors"
	"fmt"

	"github.com/zwarm/zwarm/sessions/record"
)

// ErrBusy is returned (wrapped) for a change asked of a worktree that a
// landing or an update is changing: nothing was done.
var ErrBusy = errors.New("its change is being landed or updated")

// busy says who is landing or updating the session's change (an
// ErrBusy), nil if nobody alive is.
func busy(s *record.Session) error {
	if ws := s.Workspace; ws != nil && ws.Lander.Alive() {
		return fmt.Errorf("%w (pid %d); try again once it is done", ErrBusy, ws.Lander.PID)
	}
	return nil
}
