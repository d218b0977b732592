package record

// Steps turns a turn's events into its trajectory: one step per item in the
// order items began, each in its latest state (a command that started and
// completed is one step with its exit code). Bookkeeping events
// (thread.started, turn.started, unknown) are left out.
func Steps(events []Event) []Event {
	out := make([]Event, 0, len(events))
	at := map[string]int{}
	for _, ev := range events {
		switch ev.Type {
		case EventThreadStarted, EventTurnStarted, EventUnknown:
			continue
		}
		if ev.ItemID != "" && ev.Phase != "" {
			if i, ok := at[ev.ItemID]; ok && out[i].Type == ev.Type {
				out[i] = ev
				continue
			}
			at[ev.ItemID] = len(out)
		}
		out = append(out, ev)
	}
	return out
}
