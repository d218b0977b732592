package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zwarm/zwarm/sessions/record"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// InboxState is what happened to a follow-up message.
type InboxState string

const (
	InboxQueued      InboxState = "queued"
	InboxDelivered   InboxState = "delivered"
	InboxUndelivered InboxState = "undelivered"
)

// InboxEntry is one follow-up a user or orchestrator sent to a session.
type InboxEntry struct {
	ID          string     `json:"id"`
	Seq         int        `json:"seq"`
	Text        string     `json:"text"`
	CreatedAt   time.Time  `json:"created_at"`
	State       InboxState `json:"state"`
	Turn        int        `json:"turn,omitempty"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	// Interrupt marks a follow-up sent with inject --interrupt: it is
	// delivered before the follow-ups queued without it.
	Interrupt bool `json:"interrupt,omitempty"`
}

func (st *Store) inboxPath(id string, e *InboxEntry) string {
	return filepath.Join(st.inboxDir(id), fmt.Sprintf("%08d-%s.json", e.Seq, e.ID))
}

// writeInbox stores an entry. Callers hold the session lock.
func (st *Store) writeInbox(id string, e *InboxEntry) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.inboxDir(id), dirPerm); err != nil {
		return fmt.Errorf("inbox of %s: %w", id, err)
	}
	if err := st.writeFileAtomic(st.inboxPath(id, e), append(data, '\n')); err != nil {
		return fmt.Errorf("inbox of %s: %w", id, err)
	}
	return nil
}

// Inbox lists a session's follow-ups in the order they were sent.
func (st *Store) inbox(id string) ([]InboxEntry, error) {
	ents, err := os.ReadDir(st.inboxDir(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inbox of %s: %w", id, err)
	}
	var out []InboxEntry
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(st.inboxDir(id), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("inbox of %s: %w", id, err)
		}
		var ie InboxEntry
		if err := json.Unmarshal(data, &ie); err != nil {
			return nil, fmt.Errorf("inbox of %s: %s: %w", id, e.Name(), err)
		}
		out = append(out, ie)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// interruptsQueued counts the queued follow-ups sent as interrupts: those
// a new interrupt's follow-up waits behind. Callers hold the lock.
func (st *Store) interruptsQueued(id string) (int, error) {
	entries, err := st.inbox(id)
	n := 0
	for _, e := range entries {
		if e.State == InboxQueued && e.Interrupt {
			n++
		}
	}
	return n, err
}

// dropQueued marks every queued entry undelivered. Callers hold the lock.
func (st *Store) dropQueued(s *record.Session, reason string) error {
	entries, err := st.inbox(s.ID)
	if err != nil {
		return err
	}
	for i := range entries {
		if entries[i].State != InboxQueued {
			continue
		}
		entries[i].State, entries[i].Reason = InboxUndelivered, reason
		if err := st.writeInbox(s.ID, &entries[i]); err != nil {
			return err
		}
	}
	s.PendingInjects = 0
	return nil
}

// deliverNext marks the oldest queued follow-up delivered as turn n and
// returns it, or nil when none is queued; one sent as an interrupt goes
// before the others. Callers hold the lock.
func (st *Store) deliverNext(s *record.Session, n int, now time.Time) (*InboxEntry, error) {
	entries, err := st.inbox(s.ID)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Interrupt && !entries[j].Interrupt })
	for i := range entries {
		e := &entries[i]
		if e.State != InboxQueued {
			continue
		}
		e.State, e.Turn, e.DeliveredAt = InboxDelivered, n, &now
		if err := st.writeInbox(s.ID, e); err != nil {
			return nil, err
		}
		s.PendingInjects = max(0, s.PendingInjects-1)
		return e, nil
	}
	return nil, nil
}
