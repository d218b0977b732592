package state

import (
	"slices"
	"strings"

	"github.com/zwarm/zwarm/sessions/record"
)

// Accounted keeps what a cluster's accounting said of s's ended jobs,
// those it lacks, in the order of their ids, and counts their core-hours
// in its cost (prices). A job still running (the session's current one)
// is not accounted for yet: its figures would not be final.
func Accounted(s *record.Session, accounts []record.JobAccount, prices record.Prices) error {
	for _, a := range accounts {
		if _, ok := s.Account(a.ID); ok || !slices.Contains(s.Unaccounted(), a.ID) {
			continue
		}
		s.Accounting = append(s.Accounting, a)
	}
	slices.SortFunc(s.Accounting, func(a, b record.JobAccount) int {
		return cmpJobID(a.ID, b.ID)
	})
	s.Refresh(prices)
	return nil
}

// cmpJobID orders job ids as numbers where they are.
func cmpJobID(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
