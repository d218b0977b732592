// Package render turns sessions and their events into text for people and
// for models, one way for every view: the dashboard, `zwarm show`,
// `zwarm logs`, the wait outcomes, and the orchestrator's tools. It returns
// plain text (lines tagged with a kind, so each view styles them its own
// way) and never styles anything itself: it imports no UI library.
//
// Every piece of text that came from an agent or a user goes through Safe
// or SafeLine here, so whatever prints a Line prints nothing a terminal
// would act on.
package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

// Unknown stands for a number that is not known yet: a codex turn's usage
// before the turn ends.
const Unknown = "–"

// Unpriced stands for a cost that cannot be known: the price of the model
// is not in the price table (config.toml's [prices] adds it). It is not
// Unknown, which waits for the agent: this waits for the person.
const Unpriced = "?"

// Tokens abbreviates a token count: 950, 1.5k, 24k, 1.2M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	case n >= 10_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	case n >= 1000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// Money writes dollars by one rule everywhere: cents from a cent up
// ($0.06, $12.40), two significant digits below a cent ($0.0061,
// $0.00045), so that a total of many cheap sessions never reads $0.00.
func Money(v float64) string {
	switch {
	case v == 0:
		return "$0.00"
	case v < 0:
		return "-" + Money(-v)
	case v >= 0.01:
		return fmt.Sprintf("$%.2f", v)
	case v < 1e-6:
		return "<$0.000001"
	}
	decimals := 1 - int(math.Floor(math.Log10(v)))
	return "$" + strconv.FormatFloat(v, 'f', decimals, 64)
}

// Cost writes a cost that may be unpriced (nil): Unpriced then.
func Cost(c *float64) string {
	if c == nil {
		return Unpriced
	}
	return Money(*c)
}

// LaterCost is PartialCost of a cost that may not be known yet (notYet:
// what runs has reported no usage yet), Unknown then.
func LaterCost(notYet bool, c float64, known bool) string {
	if notYet {
		return Unknown
	}
	return PartialCost(c, known)
}

// PartialCost writes a sum of costs of which some may be unpriced (known
// false): the priced part, "+?" for the rest ($0.0081+?), or Unpriced when
// nothing was priced.
func PartialCost(c float64, known bool) string {
	switch {
	case known:
		return Money(c)
	case c == 0:
		return Unpriced
	}
	return Money(c) + "+" + Unpriced
}

// PriceFootnote is the line under a listing where some cost reads
// Unpriced: the models without a price and how to give them one; "" when
// models is empty.
func PriceFootnote(models []string) string {
	if len(models) == 0 {
		return ""
	}
	list := ""
	for i, m := range models {
		if i > 0 {
			list += ", "
		}
		list += SafeLine(m)
	}
	what := "model"
	if len(models) > 1 {
		what = "models"
	}
	return fmt.Sprintf("%s no price known for %s %s: add [prices.%q] (input, cached_input, output in $ per million tokens) to config.toml",
		Unpriced, what, list, SafeLine(models[0]))
}

// SessionUnpriced reports whether a session's cost is unpriced: it has reported
// usage (or finished a turn) and its model has no price.
func SessionUnpriced(s *record.Session) bool {
	return s.CostUSD == nil && s.Turn > 0 && !usageUnknown(s)
}

// UnpricedModels lists, once each and in order, the models of the
// sessions whose cost is unpriced.
func UnpricedModels(list []*record.Session) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if SessionUnpriced(s) && !seen[s.Model] {
			seen[s.Model] = true
			out = append(out, s.Model)
		}
	}
	return out
}

// usageUnknown says a session has reported no usage yet while it runs:
// codex reports a turn's usage only when the turn ends, so 0 would be a lie.
func usageUnknown(s *record.Session) bool {
	return s.Usage.IsZero() && !s.Settled()
}

// SessionTokens is a session's token total, Unknown while nothing has been
// reported.
func SessionTokens(s *record.Session) string {
	if usageUnknown(s) {
		return Unknown
	}
	return Tokens(s.Usage.TotalTokens)
}

// SessionCost is a session's cost: Unknown while nothing has been
// reported, Unpriced when its model has no price.
func SessionCost(s *record.Session) string {
	if usageUnknown(s) || (s.CostUSD == nil && s.Turn == 0) {
		return Unknown
	}
	return Cost(s.CostUSD)
}

// ExitText is an ended agent's exit code as shown, "exit 3", or "" when it
// tells nothing: a killed agent's exit 0 is only its answer to the stop,
// and "killed · exit 0" would read as a contradiction.
func ExitText(st record.Status, code *int) string {
	if code == nil || st == record.StatusKilled && *code == 0 {
		return ""
	}
	return "exit " + strconv.Itoa(*code)
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

// Age writes how long ago something was, coarsely: 12s, 4m, 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Ago is Age as a phrase: "12s ago", "just now" under a second.
func Ago(d time.Duration) string {
	if d < time.Second {
		return "just now"
	}
	return Age(d) + " ago"
}

// When writes a moment for people: relative, with the absolute time in UTC
// after it, "4m ago (2026-03-01 11:56:00 UTC)".
func When(t, now time.Time) string {
	return fmt.Sprintf("%s (%s)", Ago(now.Sub(t)), t.UTC().Format("2006-01-02 15:04:05 MST"))
}

// Plural writes a count with its noun: "1 turn", "3 turns".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Dropped says what a kill did to follow-ups still queued, the same in the
// CLI and the dashboard: "2 queued follow-ups dropped, undelivered".
func Dropped(n int) string {
	return Plural(n, "queued follow-up") + " dropped, undelivered"
}

// Source names who started a session in one word, the same everywhere (and
// as in JSON): "user", "mcp", or "run:ID" shortened to the run's short id.
func Source(s record.Source) string {
	if s.Kind == record.SourceRun {
		return "run:" + SafeLine(record.ShortID(s.Run))
	}
	return SafeLine(s.String())
}

// Quiet says how long a running session's agent has been silent, "" when it
// is not running or spoke recently: a stalled model shows at a glance. An
// attached session is never quiet: a person works in the agent's own CLI,
// whose output zwarm does not record, so its silence says nothing.
func Quiet(s *record.Session, now time.Time) string {
	if s.Settled() || s.Status() == record.StatusAttached || s.LastEventAt == nil {
		return ""
	}
	if d := now.Sub(*s.LastEventAt); d >= QuietAfter {
		return "quiet " + Age(d)
	}
	return ""
}

// QuietAfter is how long an agent may print nothing before its session is
// flagged as quiet.
const QuietAfter = time.Minute

// Limit writes a dollar limit as it was given: all its digits, and cents
// at least ($2.00, $0.125, $0.0005), so a limit below a cent never reads
// $0.00 and one of $0.125 is not shown as $0.13.
func Limit(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	i := strings.IndexByte(s, '.')
	switch {
	case i < 0:
		s += ".00"
	case len(s)-i-1 < 2:
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return "$" + s
}
