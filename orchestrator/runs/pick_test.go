package runs

import (
	"errors"
	"testing"
)

// A number or an option's text picks that option; a number that is no
// option's is refused; anything else, or any number without options, is
// the answer itself.
func TestPick(t *testing.T) {
	opts := Question{Options: []string{"80", "8080", "postgres"}}
	for _, tc := range []struct {
		q      Question
		answer string
		text   string
		n      int
		bad    bool
	}{
		{opts, "2", "8080", 2, false},
		{opts, " 3 ", "postgres", 3, false},
		{opts, "8080", "8080", 2, false}, // its text, not the 8080th
		{opts, "80", "80", 1, false},
		{opts, "4", "", 0, true},
		{opts, "0", "", 0, true},
		{opts, "-1", "", 0, true},
		{opts, "99999999999999999999", "", 0, true}, // a number past an int is a number
		{opts, "-99999999999999999999", "", 0, true},
		{opts, "sqlite, please", "sqlite, please", 0, false},
		{Question{}, "4", "4", 0, false},
	} {
		text, n, err := tc.q.Pick(tc.answer)
		var pe *PickError
		if text != tc.text || n != tc.n || errors.As(err, &pe) != tc.bad || (err != nil) != tc.bad {
			t.Errorf("Pick(%q) = %q, %d, %v; want %q, %d, refused %v", tc.answer, text, n, err, tc.text, tc.n, tc.bad)
		}
	}
}
