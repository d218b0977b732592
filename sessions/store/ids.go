package store

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// ErrNotFound is returned (wrapped) when no session matches an id.
var ErrNotFound = errors.New("no such session")

// ErrInvalidID is returned (wrapped) for something that cannot be a session
// id or a prefix of one.
var ErrInvalidID = errors.New("invalid session id")

// AmbiguousError says an id prefix matches several sessions.
type AmbiguousError struct {
	Prefix     string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("id prefix %q is ambiguous: it matches %s; give more characters", e.Prefix, strings.Join(e.Candidates, ", "))
}

// NewID is a new session id, a uuid4.
func NewID() string { return uuid.NewString() }

// IDLen is the length of a whole session id (a uuid's text).
const IDLen = 36

// ValidID accepts only what a session id or a prefix of one can look like,
// so that nothing a user types ("..", "a/b") ever reaches a file path.
func ValidID(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrInvalidID)
	}
	if len(s) > IDLen {
		return fmt.Errorf("%w %q: longer than a uuid", ErrInvalidID, s)
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return fmt.Errorf("%w %q: ids are hex digits and dashes (see zwarm ls)", ErrInvalidID, s)
		}
	}
	return nil
}

// ResolveID turns a full id or a unique prefix, among all, into a full id.
func ResolveID(prefix string, all []string) (string, error) {
	if err := ValidID(prefix); err != nil {
		return "", err
	}
	var hits []string
	for _, id := range all {
		if id == prefix {
			return id, nil
		}
		if strings.HasPrefix(id, prefix) {
			hits = append(hits, id)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("session %q: %w (zwarm ls lists them)", prefix, ErrNotFound)
	case 1:
		return hits[0], nil
	}
	sort.Strings(hits)
	return "", &AmbiguousError{Prefix: prefix, Candidates: hits}
}

// ShortID is the form the UI shows.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
