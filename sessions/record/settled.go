package record

import "fmt"

// Settled reports whether the session is at rest: no turn runs and none is
// about to start. Only then is its status final (until a follow-up).
func (s *Session) Settled() bool {
	if s.Legacy {
		return s.Status().Finished()
	}
	return s.Status().Finished() && s.Owner == nil
}

// Stopping reports whether a kill is in progress.
func (s *Session) Stopping() bool { return s.Stop != nil && !s.Settled() }

// TurnRunning reports whether the current turn has started and not ended.
func (s *Session) TurnRunning() bool {
	t := s.Current()
	return t != nil && t.EndedAt == nil
}

// Interruptible is the one answer to "can it take an interrupt?": a turn
// runs that nothing else is stopping (no kill in progress, no earlier
// interrupt still at work). A session that cannot (settled, attached,
// pending, or already being stopped) takes the follow-up as inject does.
func (s *Session) Interruptible() bool {
	return !s.Legacy && s.Status() == StatusRunning && s.TurnRunning() && s.Stop == nil && s.Interrupt == nil
}

// NotInterruptible says why s cannot take an interrupt now, for one that
// is not Interruptible.
func (s *Session) NotInterruptible() string {
	switch {
	case s.Stop != nil:
		return "a kill is in progress"
	case s.Interrupt != nil:
		return fmt.Sprintf("turn %d is being interrupted already", s.Interrupt.Turn)
	case s.Status() == StatusPending:
		return "it is starting"
	}
	return "no turn is running"
}
