// Package format writes the numbers zwarm shows people, the same way in
// the dashboard and on the command line.
package render

import (
	"fmt"
	"time"
)

// Tokens abbreviates a token count: 950, 1.5k, 24k, 1.2M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

// Cost writes dollars, with more digits for fractions of a cent; "?" when
// the price is unknown.
func Cost(c *float64) string {
	if c == nil {
		return "?"
	}
	if *c > 0 && *c < 0.01 {
		return fmt.Sprintf("$%.4f", *c)
	}
	return fmt.Sprintf("$%.2f", *c)
}

// Runtime writes a duration to the second: 42s, 3m05s, 2h10m.
func Runtime(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
