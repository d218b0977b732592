package common

import (
	"slices"

	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

// Totals are what the header says of the sessions, hidden ones too: how
// many there are in each status, and the tokens and money they used. The
// list keeps them as sessions come and go, so that the header of 100,000
// sessions costs what the few that change cost.
type Totals struct {
	Sessions int
	Counts   map[record.Status]int
	Tokens   int64
	Cost     float64
	// Unpriced counts the sessions whose model has no price (the money is
	// then a part: "$0.20+?"); unpriced counts them by model, in the
	// order the models were first seen.
	Unpriced int
	unpriced map[string]int
	models   []string
}

// TotalsOf adds up list.
func TotalsOf(list []*record.Session) Totals {
	var t Totals
	for _, s := range list {
		t.AddSession(s, 1)
	}
	return t
}

// AddSession adds a session (sign 1) or takes it away (-1).
func (t *Totals) AddSession(s *record.Session, sign int) {
	cost := 0.0
	if s.CostUSD != nil {
		cost = *s.CostUSD
	}
	t.add(s.Status(), s.Model, s.Usage.TotalTokens, cost, render.SessionUnpriced(s), sign)
}

// AddBrief adds a listing's settled session (sign 1) or takes it away
// (-1), as AddSession would its record: settled, its usage is known.
func (t *Totals) AddBrief(b listing.Brief, sign int) {
	t.add(b.Status, b.Model, b.Tokens, b.CostUSD, !b.Priced && b.Turn > 0, sign)
}

func (t *Totals) add(st record.Status, model string, tokens int64, cost float64, unpriced bool, sign int) {
	if t.Counts == nil {
		t.Counts = map[record.Status]int{}
	}
	t.Sessions += sign
	t.Counts[st] += sign
	t.Tokens += int64(sign) * tokens
	t.Cost += float64(sign) * cost
	if !unpriced {
		return
	}
	t.Unpriced += sign
	if t.unpriced == nil {
		t.unpriced = map[string]int{}
	}
	if _, seen := t.unpriced[model]; !seen {
		t.models = append(t.models, model)
	}
	t.unpriced[model] += sign
}

// Plus is t and u together.
func (t Totals) Plus(u Totals) Totals {
	out := Totals{Sessions: t.Sessions + u.Sessions, Counts: map[record.Status]int{}, Tokens: t.Tokens + u.Tokens,
		Cost: t.Cost + u.Cost, Unpriced: t.Unpriced + u.Unpriced, unpriced: map[string]int{}}
	for _, x := range []Totals{t, u} {
		for st, n := range x.Counts {
			out.Counts[st] += n
		}
		for _, model := range x.models {
			if _, seen := out.unpriced[model]; !seen {
				out.models = append(out.models, model)
			}
			out.unpriced[model] += x.unpriced[model]
		}
	}
	return out
}

// UnpricedModels names the models of the unpriced sessions, once each.
func (t Totals) UnpricedModels() []string {
	return slices.DeleteFunc(slices.Clone(t.models), func(m string) bool { return t.unpriced[m] <= 0 })
}
