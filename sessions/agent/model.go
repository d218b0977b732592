package agent

import (
	"strings"

	"github.com/zwarm/zwarm/sessions/config"
)

// CheckModel refuses a model name that an agent's command line would take
// for an option of its own ("-m --help"), or that is blank: no model an
// agent knows is named so, and a turn given one fails, or does something
// else than asked.
func CheckModel(model string) error {
	switch {
	case strings.HasPrefix(model, "-"):
		return config.Invalidf("model %q: a model's name does not start with '-'", model)
	case model != "" && strings.TrimSpace(model) == "":
		return config.Invalidf("model %q: a model's name is not blank", model)
	}
	return nil
}
