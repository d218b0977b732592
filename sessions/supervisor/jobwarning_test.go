package supervisor

import (
	"testing"
	"time"
)

func TestParseTimeLeft(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0:45", 45 * time.Second, true},
		{"1:00", time.Minute, true},
		{"12:03:04", 12*time.Hour + 3*time.Minute + 4*time.Second, true},
		{"2-01:00:00", 49 * time.Hour, true},
		{"UNLIMITED", 0, false},
		{"NOT_SET", 0, false},
		{"INVALID", 0, false},
		{"", 0, false},
		{"1:2:3:4", 0, false},
		{"x-1:00", 0, false},
	} {
		got, ok := parseTimeLeft(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseTimeLeft(%q) = %s, %v; want %s, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
