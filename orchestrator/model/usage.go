package model

import "github.com/zwarm/zwarm/sessions/record"

// apiUsage is the usage object of a Responses API response.
type apiUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

func (u apiUsage) usage() record.Usage {
	out := record.Usage{
		InputTokens:           u.InputTokens,
		CachedInputTokens:     u.InputTokensDetails.CachedTokens,
		OutputTokens:          u.OutputTokens,
		ReasoningOutputTokens: u.OutputTokensDetails.ReasoningTokens,
		TotalTokens:           u.TotalTokens,
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	return out
}
