package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

func (st *Store) InboxPath(id string, e *record.InboxEntry) string {
	return filepath.Join(st.InboxDir(id), fmt.Sprintf("%08d-%s.json", e.Seq, e.ID))
}

// WriteInbox stores an entry. Callers hold the session lock.
func (st *Store) WriteInbox(id string, e *record.InboxEntry) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.InboxDir(id), dirPerm); err != nil {
		return fmt.Errorf("inbox of %s: %w", id, err)
	}
	if err := st.WriteFileAtomic(st.InboxPath(id, e), append(data, '\n')); err != nil {
		return fmt.Errorf("inbox of %s: %w", id, err)
	}
	return nil
}

// Inbox lists a session's follow-ups in the order they were sent.
func (st *Store) Inbox(id string) ([]record.InboxEntry, error) {
	ents, err := os.ReadDir(st.InboxDir(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inbox of %s: %w", id, err)
	}
	var out []record.InboxEntry
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(st.InboxDir(id), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("inbox of %s: %w", id, err)
		}
		var ie record.InboxEntry
		if err := json.Unmarshal(data, &ie); err != nil {
			return nil, fmt.Errorf("inbox of %s: %s: %w", id, e.Name(), err)
		}
		out = append(out, ie)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// InterruptsQueued counts the queued follow-ups sent as interrupts: those
// a new interrupt's follow-up waits behind. Callers hold the lock.
func (st *Store) InterruptsQueued(id string) (int, error) {
	entries, err := st.Inbox(id)
	n := 0
	for _, e := range entries {
		if e.State == record.InboxQueued && e.Interrupt {
			n++
		}
	}
	return n, err
}

// QueuedIDs are the ids of the follow-ups waiting for a turn (none when
// the inbox cannot be read). Callers hold the lock.
func (st *Store) QueuedIDs(id string) map[string]bool {
	entries, _ := st.Inbox(id)
	queued := map[string]bool{}
	for _, e := range entries {
		if e.State == record.InboxQueued {
			queued[e.ID] = true
		}
	}
	return queued
}

// Undelivered are the entries of ids that were not delivered.
func (st *Store) Undelivered(id string, ids map[string]bool) []record.InboxEntry {
	entries, _ := st.Inbox(id)
	var out []record.InboxEntry
	for _, e := range entries {
		if ids[e.ID] && e.State == record.InboxUndelivered {
			out = append(out, e)
		}
	}
	return out
}

// DropQueued marks every queued entry undelivered. Callers hold the lock.
func (st *Store) DropQueued(s *record.Session, reason string) error {
	entries, err := st.Inbox(s.ID)
	if err != nil {
		return err
	}
	for i := range entries {
		if entries[i].State != record.InboxQueued {
			continue
		}
		entries[i].State, entries[i].Reason = record.InboxUndelivered, reason
		if err := st.WriteInbox(s.ID, &entries[i]); err != nil {
			return err
		}
	}
	s.PendingInjects = 0
	return nil
}

// deliverNext marks the oldest queued follow-up delivered as turn n and
// returns it, or nil when none is queued; one sent as an interrupt goes
// before the others. Callers hold the lock.
func (st *Store) deliverNext(s *record.Session, n int, now time.Time) (*record.InboxEntry, error) {
	entries, err := st.Inbox(s.ID)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Interrupt && !entries[j].Interrupt })
	for i := range entries {
		e := &entries[i]
		if e.State != record.InboxQueued {
			continue
		}
		e.State, e.Turn, e.DeliveredAt = record.InboxDelivered, n, &now
		if err := st.WriteInbox(s.ID, e); err != nil {
			return nil, err
		}
		s.PendingInjects = max(0, s.PendingInjects-1)
		return e, nil
	}
	return nil, nil
}
