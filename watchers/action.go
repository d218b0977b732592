package watchers

import "fmt"

// Action is a watcher's answer.
type Action string

const (
	// Continue lets the run go on.
	Continue Action = "continue"
	// Nudge adds guidance to the run's next model call (for a worker: tells
	// whoever drives it).
	Nudge Action = "nudge"
	// Pause ends the run as interrupted; --resume continues it.
	Pause Action = "pause"
	// Abort ends the run as failed.
	Abort Action = "abort"
	// Stop says a worker watcher stopped the worker itself.
	Stop Action = "stop"
)

// Severity orders actions: abort > pause > nudge > continue. Stop, which
// only worker watchers answer, counts as a nudge to a run: the worker is
// already stopped, the run is told.
func (a Action) Severity() int {
	switch a {
	case Abort:
		return 3
	case Pause:
		return 2
	case Nudge, Stop:
		return 1
	}
	return 0
}

// UnmarshalText accepts the actions a configured rule may take.
func (a *Action) UnmarshalText(b []byte) error {
	switch v := Action(b); v {
	case Continue, Nudge, Pause, Abort:
		*a = v
		return nil
	}
	return fmt.Errorf("action %q is not one of continue, nudge, pause, abort", b)
}
