package sessions

import (
	"strings"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/state"
)

// ApplyRole fills what req leaves empty from its role (none: req as it
// is). The role's model goes only with the role's adapter: a request for
// another adapter keeps that adapter's default model, as a model name
// means nothing to another agent. Applying it twice changes nothing.
func ApplyRole(c *config.Config, req SpawnRequest) (SpawnRequest, error) {
	if req.Role == "" {
		return req, nil
	}
	r, err := c.Role(req.Role)
	if err != nil {
		return req, err
	}
	if req.Model == "" && (req.Adapter == "" || r.Adapter == "" || req.Adapter == r.Adapter) {
		req.Model = r.Model
	}
	req.Adapter = state.FirstNonBlank(req.Adapter, r.Adapter)
	req.ReasoningEffort = state.FirstNonBlank(req.ReasoningEffort, r.ReasoningEffort)
	req.Sandbox = state.FirstNonBlank(req.Sandbox, r.Sandbox)
	req.Runner = state.FirstNonBlank(req.Runner, r.Runner)
	if req.Instructions == "" {
		req.Instructions = strings.TrimSpace(r.Instructions)
	}
	if req.MaxCostUSD == 0 {
		req.MaxCostUSD = r.MaxCostUSD
	}
	return req, nil
}
