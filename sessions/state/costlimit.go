package state

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
)

// A session's cost limit (Session.MaxCostUSD) is enforced by its
// supervisor, as each turn's usage is recorded (RecordProgress, EndTurn),
// so it holds whether or not anything watches the session: once the cost
// passes the limit, a stop is recorded with the reason, the agent is
// stopped as a kill stops it, queued follow-ups are not delivered, and the
// session settles as killed. A follow-up sent after that is refused
// (ErrOverCostLimit); one queued before the cost was known starts no agent
// (Turns.next stops it first) and is reported undelivered. A turn's cost
// is known as its agent reports usage: claude with each model call in its
// output (usage events, Turn.UsageSoFar), codex with each call as
// telemetry (UsageReporter; its output says it only at the turn's end),
// so a turn may pass the limit by what it spent since the last report.

// ErrOverCostLimit is returned (wrapped) for a follow-up to a session that
// has spent past its cost limit: it takes none.
var ErrOverCostLimit = errors.New("the session takes no follow-up")

// CheckCostLimit refuses a cost limit that cannot be enforced: a negative
// one, or one on a model whose price is unknown to an agent that does not
// report its own cost.
func CheckCostLimit(s *record.Session, ad agent.Adapter, prices record.Prices) error {
	switch c := s.MaxCostUSD; {
	case c == 0:
		return nil
	case c < 0 || math.IsNaN(c) || math.IsInf(c, 0):
		return config.Invalidf("max cost %v: want a number of dollars above 0", c)
	}
	if r, ok := ad.(agent.CostReporter); ok && r.ReportsCost() {
		return nil
	}
	if _, ok := prices.Lookup(s.Model); !ok {
		return config.Invalidf("a cost limit needs the price of model %q, which zwarm does not know: "+
			"add a [prices.%q] table (input, cached_input, output in dollars per million tokens) to config.toml, "+
			"or spawn without a cost limit", s.Model, s.Model)
	}
	return nil
}

// OverCostLimit is why s must stop for its cost ("" if it need not).
func OverCostLimit(s *record.Session) string {
	if s.MaxCostUSD <= 0 || s.CostUSD == nil || *s.CostUSD <= s.MaxCostUSD {
		return ""
	}
	limit, spent := Dollars(s.MaxCostUSD, 4), Dollars(*s.CostUSD, 4)
	for n := 5; spent == limit && n <= 12; n++ {
		spent = Dollars(*s.CostUSD, n) // never "$0.50: $0.50 spent"
	}
	return fmt.Sprintf("over its cost limit of %s: %s spent", limit, spent)
}

// enforceCostLimit records a stop on s (held under its lock) once its cost
// has passed its limit, and tells the supervisor to stop its agent.
func enforceCostLimit(t *Turns, s *record.Session, now time.Time) {
	why := OverCostLimit(s)
	if why == "" || s.Settled() {
		return
	}
	if s.Stop == nil {
		requestStop(s, why, now)
	}
	t.overCost.Store(&why)
}

// OverCostLimit is why the session must stop for its cost, once a record
// of its turns found it past its limit ("" until then): the supervisor
// then stops its agent, as a kill would.
func (t *Turns) OverCostLimit() string {
	if p := t.overCost.Load(); p != nil {
		return *p
	}
	return ""
}

// Dollars writes an amount to the cent, or with sig significant digits
// when it has more than cents ("$0.0042"), at least to the cent.
func Dollars(v float64, sig int) string {
	if c := math.Round(v * 100); math.Abs(v*100-c) < 1e-9 {
		return fmt.Sprintf("$%.2f", v)
	}
	decimals := max(2, sig-1-int(math.Floor(math.Log10(v))))
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = strings.TrimRight(s, "0")
		if len(s)-i-1 < 2 {
			s += strings.Repeat("0", 2-(len(s)-i-1))
		}
	}
	return "$" + s
}

// RoleSaid names the role in an error about a setting it may have given.
func RoleSaid(role string, err error) error {
	if role == "" || errors.As(err, new(*config.Error)) {
		return err // a file's error names the file
	}
	return config.Invalidf("%v (with role %s, [roles.%s] in config.toml)", err, role, role)
}

// RaiseCostLimit sets s's cost limit to usd (held under its lock), for a
// follow-up that continues a session stopped at its limit: it must be
// above what s has spent, or the follow-up would be stopped at once.
func RaiseCostLimit(s *record.Session, usd float64) error {
	if s.CostUSD != nil && *s.CostUSD >= usd {
		return config.Invalidf("a cost limit of %s is not above the %s the session has spent: give a higher one", Dollars(usd, 4), Dollars(*s.CostUSD, 4))
	}
	s.MaxCostUSD = usd
	return nil
}

// CheckFollowUp refuses a follow-up (req, its prompt the follow-up's text)
// whose turn could never run, as spawn refuses a first turn: a cost limit
// just set (limitSet) on a model whose price zwarm does not know, which
// the supervisor could never enforce, a request the agent refuses
// whatever the machine (a prompt longer than it takes), or for a settled
// session, whose supervisor starts in this process's environment,
// telemetry that could not be sent or the agent's binary missing. A
// running session's own supervisor, with its own environment, delivers
// the follow-up.
func CheckFollowUp(s *record.Session, ad agent.Adapter, cfg *config.Config, req agent.TurnRequest, limitSet bool) error {
	if limitSet {
		if err := CheckCostLimit(s, ad, cfg.PriceTable()); err != nil {
			return err
		}
	}
	if c, ok := ad.(agent.RequestChecker); ok {
		if err := c.CheckRequest(req); err != nil {
			return err
		}
	}
	if !s.Settled() {
		return nil
	}
	if err := cfg.CheckTelemetry(); err != nil {
		return err
	}
	_, err := ad.Command(req)
	return err
}
