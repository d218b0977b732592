package store

import (
	"errors"
	"testing"
)

func TestResolveID(t *testing.T) {
	all := []string{"3f2a0000-0000-4000-8000-000000000001", "3f2b0000-0000-4000-8000-000000000002", "9c1d0000-0000-4000-8000-000000000003"}
	if id, err := ResolveID("9c", all); err != nil || id != all[2] {
		t.Fatalf("%q %v", id, err)
	}
	var amb *AmbiguousError
	if _, err := ResolveID("3f", all); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Fatalf("ambiguous: %v", err)
	}
	if _, err := ResolveID("ff", all); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	for _, bad := range []string{"", "..", "a/b", "../3f2a", "3f2a/meta.json", "x y", "zz"} {
		if _, err := ResolveID(bad, all); !errors.Is(err, ErrInvalidID) {
			t.Errorf("%q: want a validation error, got %v", bad, err)
		}
	}
}
