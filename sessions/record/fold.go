package record

// Fold applies one event to the session's current turn. It is the single
// place where events become summary: the supervisor uses it while a turn
// runs and readers use it on the unread tail of a running turn.
func (s *Session) Fold(ev Event) {
	t := s.Current()
	if t == nil {
		return
	}
	switch ev.Type {
	case EventThreadStarted:
		if ev.ThreadID != "" {
			s.ThreadID = ev.ThreadID
		}
	case EventMessage:
		if ev.Phase == PhaseCompleted || ev.Phase == "" {
			t.LastMessage = ev.Text
		}
	case EventUsage:
		if ev.Usage != nil {
			so := ev.Usage.WithTotal()
			if t.UsageSoFar != nil {
				so = t.UsageSoFar.Add(so)
			}
			t.UsageSoFar = &so
		}
	case EventTurnCompleted:
		s.foldUsage(t, ev)
		t.foldDenials(ev.Denials)
	case EventTurnFailed:
		t.foldDenials(ev.Denials)
		t.AgentFailed = true
		if ev.Text != "" {
			t.Error = ev.Text
		}
		// An agent may price a failed turn too (claude's result with
		// is_error carries its usage and cost).
		s.foldUsage(t, ev)
	case EventError:
		// A top-level error right before turn.failed carries the reason; keep
		// the latest one in case the agent dies before saying turn.failed.
		if ev.Text != "" && !t.AgentFailed {
			t.AgentError = ev.Text
		}
	}
}

// foldUsage accounts the usage and cost an event reports for turn t.
func (s *Session) foldUsage(t *Turn, ev Event) {
	if ev.Usage != nil {
		t.UsageSoFar = nil // the turn's own report replaces the calls'
		u := ev.Usage.Counted().WithTotal()
		switch {
		case ev.Cumulative:
			t.Usage = u.Sub(s.threadBase())
			t.ThreadUsage = &u
		case ev.ProcessUsage:
			t.Usage = u
			if prev := s.sameProcessBefore(); prev != nil && prev.ProcessUsage != nil && u.TotalTokens >= prev.ProcessUsage.TotalTokens {
				t.Usage = u.Sub(*prev.ProcessUsage)
			}
			t.ProcessUsage = &u
		default:
			t.Usage = t.Usage.Add(u)
		}
	}
	if ev.CostUSD != nil {
		c := *ev.CostUSD
		if ev.ProcessCost {
			total := c
			if prev := s.sameProcessBefore(); prev != nil && prev.ProcessCost != nil && c >= *prev.ProcessCost {
				c -= *prev.ProcessCost
			}
			t.ProcessCost = &total
		} else if t.CostReported && t.CostUSD != nil {
			c += *t.CostUSD
		}
		t.CostUSD, t.CostReported = &c, true
	}
}

// sameProcessBefore is the turn before the current one if the current
// one was delivered live to the same agent process (nil otherwise): its
// running totals (ProcessCost, ProcessUsage) are the current turn's base.
func (s *Session) sameProcessBefore() *Turn {
	n := len(s.Turns)
	if n < 2 || !s.Turns[n-1].Live {
		return nil
	}
	return &s.Turns[n-2]
}

// maxDenials bounds the denied calls a turn's record lists.
const maxDenials = 10

// foldDenials counts the tool calls the agent's permissions refused, and
// keeps the first few to show.
func (t *Turn) foldDenials(ds []Denial) {
	t.Denied += len(ds)
	for _, d := range ds {
		if len(t.Denials) < maxDenials {
			t.Denials = append(t.Denials, d)
		}
	}
}

// CompactEvents returns the events of evs whose folding, in order, into a
// record changes it as folding all of evs would. A supervisor that cannot
// save its record for a while (a full disk) keeps only these, so what it
// holds stays small however much the agent prints meanwhile: the events
// Fold does not use go, and of the thread ids and the final messages only
// the last counts, as of the errors the last before a turn.failed. The
// turn's ends stay (each adds usage and denials).
func CompactEvents(evs []Event) []Event {
	lastThread, lastMsg, lastErr := -1, -1, -1
	failed := false
	for i, ev := range evs {
		switch ev.Type {
		case EventThreadStarted:
			if ev.ThreadID != "" {
				lastThread = i
			}
		case EventMessage:
			if ev.Phase == PhaseCompleted || ev.Phase == "" {
				lastMsg = i
			}
		case EventError:
			if ev.Text != "" && !failed {
				lastErr = i
			}
		case EventTurnFailed:
			failed = true
		}
	}
	out := evs[:0]
	for i, ev := range evs {
		switch {
		case ev.Type == EventTurnCompleted, ev.Type == EventTurnFailed, i == lastThread, i == lastMsg, i == lastErr:
			out = append(out, ev)
		}
	}
	clear(evs[len(out):]) // let go of what was dropped
	return out
}
