package termbg

import "testing"

func TestDark(t *testing.T) {
	for v, want := range map[string]bool{
		"":             true, // unset: assumed dark
		"15;0":         true,
		"0;15":         false,
		"0;default;15": false,
		"15;default;0": true,
		"0;7":          false,
		"7;4":          true,
		"x;y":          true, // unreadable: assumed dark
		"0;300":        true,
	} {
		if got := Dark(v); got != want {
			t.Errorf("Dark(%q) = %v, want %v", v, got, want)
		}
	}
}
