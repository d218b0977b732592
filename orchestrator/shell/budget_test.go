package shell

import (
	"strings"
	"testing"
)

// 0 tokens is the count alone (the spec's marker-only case); a negative
// number is refused with words that say 0 is allowed.
func TestOutputBudgetTakesZeroAndRefusesLess(t *testing.T) {
	zero, minus := 0, -5
	if b, err := outputBudget(&zero); err != nil || b != 0 {
		t.Fatalf("0 tokens: %d, %v", b, err)
	}
	if _, err := outputBudget(&minus); err == nil || !strings.Contains(err.Error(), "0 or more") {
		t.Fatalf("-5 tokens: %v", err)
	}
}
