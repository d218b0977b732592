package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Inject sends a follow-up to a session. A running session queues it; the
// supervisor delivers queued follow-ups in order as the next turns. A
// finished session (completed, failed or killed) continues at once in the
// same agent thread, by the agent's native resume.
func (m *Manager) Inject(ctx context.Context, idOrPrefix, text string) (*InboxEntry, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("empty message: say what the agent should do next")
	}
	id, err := m.st.resolve(idOrPrefix)
	if err != nil {
		return nil, err
	}
	self, err := refOf(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("inject %s: %w", ShortID(id), err)
	}
	self.Role = roleSpawn
	entry := &InboxEntry{ID: newID(), Text: text, CreatedAt: time.Now().UTC(), State: InboxQueued}
	needSupervisor := false
	_, err = m.st.update(id, func(s *Session) error {
		if s.Legacy {
			return fmt.Errorf("session %s was written by the Python zwarm and is read-only", ShortID(id))
		}
		entry.Seq = s.NextInboxSeq
		s.NextInboxSeq++
		if err := m.st.writeInbox(id, entry); err != nil {
			return err
		}
		s.PendingInjects++
		if s.Owner.Alive() {
			return nil // its owner delivers it after the running turn
		}
		needSupervisor = true
		s.Status, s.Owner, s.EndedAt = StatusPending, self, nil
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("inject %s: %w", ShortID(id), err)
	}
	if needSupervisor {
		if err := m.startSupervisor(ctx, id); err != nil {
			return entry, err
		}
	}
	return entry, nil
}

// WaitInbox blocks until a follow-up has been answered: the turn it became
// has ended, or it was reported undelivered.
func (m *Manager) WaitInbox(ctx context.Context, id, entryID string) (*InboxEntry, *Session, error) {
	id, err := m.st.resolve(id)
	if err != nil {
		return nil, nil, err
	}
	var got *InboxEntry
	s, err := m.waitUntil(ctx, id, func(s *Session) (bool, error) {
		entries, err := m.st.inbox(id)
		if err != nil {
			return false, err
		}
		for i := range entries {
			e := &entries[i]
			if e.ID != entryID {
				continue
			}
			got = e
			switch e.State {
			case InboxUndelivered:
				return true, nil
			case InboxDelivered:
				return e.Turn <= len(s.Turns) && s.Turns[e.Turn-1].EndedAt != nil, nil
			}
			return s.Status.Finished() && s.Owner == nil, nil
		}
		return false, fmt.Errorf("follow-up %s of session %s not found", entryID, ShortID(id))
	})
	return got, s, err
}
