package state

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

// DiedAt is when s's supervisor died, as its agent's guard wrote it on
// hearing so (store.Layout.SupervisorDied), else now, when a reader came
// upon it: the end a reader records. What the guard wrote counts only
// for the supervisor that owns s, and only between the current turn's
// start and now.
func (st *Store) DiedAt(s *record.Session, now time.Time) time.Time {
	b, err := os.ReadFile(st.Files().SupervisorDied(s.ID))
	if err != nil || s.Owner == nil {
		return now
	}
	pid, at, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || pid != strconv.Itoa(s.Owner.PID) || t.After(now) {
		return now
	}
	if cur := s.Current(); cur != nil && t.Before(cur.StartedAt) {
		return now
	}
	return t.UTC()
}
