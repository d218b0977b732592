package record

// Usage counts tokens. Cached input tokens are part of InputTokens and
// reasoning tokens are part of OutputTokens, as the model APIs count them.
type Usage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens,omitempty"`
	OutputTokens          int64 `json:"output_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	TotalTokens           int64 `json:"total_tokens"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:           u.InputTokens + v.InputTokens,
		CachedInputTokens:     u.CachedInputTokens + v.CachedInputTokens,
		CacheWriteInputTokens: u.CacheWriteInputTokens + v.CacheWriteInputTokens,
		OutputTokens:          u.OutputTokens + v.OutputTokens,
		ReasoningOutputTokens: u.ReasoningOutputTokens + v.ReasoningOutputTokens,
		TotalTokens:           u.TotalTokens + v.TotalTokens,
	}
}

// Sub returns u - v, never below zero: a thread total that went down (an
// agent that reset its counters) must not produce negative costs.
func (u Usage) Sub(v Usage) Usage {
	d := func(a, b int64) int64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return Usage{
		InputTokens:           d(u.InputTokens, v.InputTokens),
		CachedInputTokens:     d(u.CachedInputTokens, v.CachedInputTokens),
		CacheWriteInputTokens: d(u.CacheWriteInputTokens, v.CacheWriteInputTokens),
		OutputTokens:          d(u.OutputTokens, v.OutputTokens),
		ReasoningOutputTokens: d(u.ReasoningOutputTokens, v.ReasoningOutputTokens),
		TotalTokens:           d(u.TotalTokens, v.TotalTokens),
	}
}

// Counted is u with a count below zero, which no model reports (an agent
// binary that lies, or overflows), taken as zero: a running total must
// not become the base the next total is counted from.
func (u Usage) Counted() Usage {
	for _, n := range []*int64{&u.InputTokens, &u.CachedInputTokens, &u.CacheWriteInputTokens, &u.OutputTokens, &u.ReasoningOutputTokens, &u.TotalTokens} {
		*n = max(*n, 0)
	}
	return u
}

// WithTotal fills TotalTokens when the agent did not report it.
func (u Usage) WithTotal() Usage {
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}

// IsZero reports whether no tokens were counted.
func (u Usage) IsZero() bool { return u == Usage{} }
