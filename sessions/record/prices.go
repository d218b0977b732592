package record

import (
	"strconv"
	"strings"
)

// Price is what a model costs in US dollars per million tokens. Cached input
// tokens are billed at CachedInput instead of Input.
type Price struct {
	Input       float64 `toml:"input" json:"input"`
	CachedInput float64 `toml:"cached_input" json:"cached_input"`
	Output      float64 `toml:"output" json:"output"`
	// CoreHour is, in the entry named after a runner ([prices.slurm]),
	// what one core-hour of its jobs costs: a worker's cost counts its
	// accounted jobs' core-hours at it.
	CoreHour float64 `toml:"core_hour" json:"core_hour,omitempty"`
}

// Prices maps model names to prices.
type Prices map[string]Price

// DefaultPrices are the list prices of the common models. config.toml's
// [prices."model"] tables override or extend them; a model in neither has
// no cost (nil), shown as "?" with a note saying how to add it.
//
// Sources: OpenAI's API pricing page (platform.openai.com/docs/pricing)
// and Anthropic's (claude.com/pricing), standard tier, as of December
// 2025; Anthropic's cached input is the cache-read price (a tenth of the
// input price). Claude Code reports its own cost, which wins over these.
// The aliases Claude Code accepts (sonnet, opus, haiku) are priced as the
// model they named then.
func DefaultPrices() Prices {
	return Prices{
		// OpenAI: the GPT-5 family and the models codex offers.
		"gpt-5":              {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5-mini":         {Input: 0.25, CachedInput: 0.025, Output: 2},
		"gpt-5-nano":         {Input: 0.05, CachedInput: 0.005, Output: 0.4},
		"gpt-5-codex":        {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5.1":            {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5.1-codex":      {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5.1-codex-mini": {Input: 0.25, CachedInput: 0.025, Output: 2},
		"gpt-5.1-codex-max":  {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5.2":            {Input: 1.75, CachedInput: 0.175, Output: 14},
		"codex-mini-latest":  {Input: 1.5, CachedInput: 0.375, Output: 6},
		"gpt-4.1":            {Input: 2, CachedInput: 0.5, Output: 8},
		"gpt-4.1-mini":       {Input: 0.4, CachedInput: 0.1, Output: 1.6},
		"o3":                 {Input: 2, CachedInput: 0.5, Output: 8},
		"o4-mini":            {Input: 1.1, CachedInput: 0.275, Output: 4.4},
		// Anthropic: the Claude 4 family, by id and by Claude Code's aliases.
		"claude-opus-4-5":   {Input: 5, CachedInput: 0.5, Output: 25},
		"claude-opus-4-1":   {Input: 15, CachedInput: 1.5, Output: 75},
		"claude-opus-4":     {Input: 15, CachedInput: 1.5, Output: 75},
		"claude-sonnet-4-5": {Input: 3, CachedInput: 0.3, Output: 15},
		"claude-sonnet-4":   {Input: 3, CachedInput: 0.3, Output: 15},
		"claude-haiku-4-5":  {Input: 1, CachedInput: 0.1, Output: 5},
		"claude-3-5-haiku":  {Input: 0.8, CachedInput: 0.08, Output: 4},
		"sonnet":            {Input: 3, CachedInput: 0.3, Output: 15},
		"opus":              {Input: 5, CachedInput: 0.5, Output: 25},
		"haiku":             {Input: 1, CachedInput: 0.1, Output: 5},
	}
}

// Merge returns p with every entry of over added or replaced.
func (p Prices) Merge(over map[string]Price) Prices {
	out := make(Prices, len(p)+len(over))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range over {
		out[strings.ToLower(k)] = v
	}
	return out
}

// Lookup finds the price of a model, ignoring case and a date suffix
// ("claude-sonnet-4-5-20250929" is priced as "claude-sonnet-4-5").
func (p Prices) Lookup(model string) (Price, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if pr, ok := p[m]; ok {
		return pr, true
	}
	if i := strings.LastIndexByte(m, '-'); i > 0 && isDigits(m[i+1:]) && len(m)-i-1 == 8 {
		pr, ok := p[m[:i]]
		return pr, ok
	}
	return Price{}, false
}

// Cost prices one usage, or returns nil when the model's price is unknown.
func (p Prices) Cost(model string, u Usage) *float64 {
	pr, ok := p.Lookup(model)
	if !ok {
		return nil
	}
	cached := u.CachedInputTokens
	if cached > u.InputTokens {
		cached = u.InputTokens
	}
	c := (float64(u.InputTokens-cached)*pr.Input +
		float64(cached)*pr.CachedInput +
		float64(u.OutputTokens)*pr.Output) / 1e6
	c = RoundCost(c)
	return &c
}

// RoundCost keeps a cost's first 12 significant digits, dropping the
// binary noise of float arithmetic, so a cost prints as 0.0009, not
// 0.0009000000000000001, in piped listings and JSON alike. Rounding again
// changes nothing.
func RoundCost(c float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(c, 'g', 12, 64), 64)
	if err != nil {
		return c
	}
	return r
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
