package agent

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/zwarm/zwarm/sessions/config"
)

func TestContentText(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{``, ""},
		{`"plain"`, "plain"},
		{`[{"type":"output_text","text":"a"},{"type":"input_image"},{"type":"output_text","text":"b"}]`, "a\nb"},
		{`[{"type":"text","text":""}]`, ""},
		{`{"not":"content"}`, ""},
	} {
		if got := ContentText(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("ContentText(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
}

func TestCheckModel(t *testing.T) {
	for model, ok := range map[string]bool{"": true, "gpt-5.1-codex": true, "claude-sonnet-4-5": true, "--help": false, "-m": false, "  ": false} {
		if err := CheckModel(model); (err == nil) != ok || err != nil && !errors.Is(err, config.ErrInvalidRequest) {
			t.Errorf("CheckModel(%q) = %v", model, err)
		}
	}
}
